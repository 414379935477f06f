/* afile: the atomic writer's states — a closed file is complete under its temp name and
 * the target untouched until commit; abort after close removes it; a group renames only
 * after every member closed.  path: the sorted directory listing the writers' checks use. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/afile.h"
#include "kvsim/path.h"
#include "support.h"

/* Files in dir, hidden ones (temps) included, "." and ".." not. */
static int count_files(const char *dir)
{
    char **names;
    size_t n;
    kv_diag d;
    cr_assert_eq(kv_path_list(dir, &names, &n, &d), 0, "%s", d.msg);
    kv_path_list_free(names, n);
    return (int)n;
}

Test(path, list_is_in_name_order_without_dot_entries)
{
    char *dir = make_temp_dir();
    const char *made[] = {"b.txt", ".tmp", "a.txt", "B", "a"};
    for (size_t i = 0; i < 5; i++)
        free(write_file(dir, made[i], "x\n"));
    char **names;
    size_t n;
    kv_diag d;
    cr_assert_eq(kv_path_list(dir, &names, &n, &d), 0, "%s", d.msg);
    const char *want[] = {".tmp", "B", "a", "a.txt", "b.txt"}; /* strcmp: '.' < 'B' < 'a' */
    cr_assert_eq(n, 5);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(names[i], want[i], "entry %zu", i);
    kv_path_list_free(names, n);
    cr_assert_eq(kv_path_list("/nonexistent-kvsim-dir", &names, &n, &d), -KV_EIO);
    cr_assert_str_eq(d.msg, "cannot open directory '/nonexistent-kvsim-dir': No such file or "
                            "directory");
    cr_assert_null(names);
    cr_assert_eq(n, 0);
    rm_rf(dir);
    free(dir);
}

Test(afile, close_keeps_the_target_until_commit)
{
    char *dir = make_temp_dir();
    char *a = kv_path_join(dir, "a.txt"), *b = kv_path_join(dir, "b.txt");
    free(write_file(dir, "b.txt", "old\n"));
    kv_afile fa, fb;
    kv_diag d;
    cr_assert_eq(kv_afile_open(&fa, a, &d), 0, "%s", d.msg);
    cr_assert_eq(kv_afile_open(&fb, b, &d), 0, "%s", d.msg);
    fputs("A\n", fa.f);
    fputs("B\n", fb.f);
    cr_assert_eq(kv_afile_close(&fa, &d), 0);
    cr_assert_eq(kv_afile_close(&fb, &d), 0);
    cr_assert_eq(kv_afile_close(&fb, &d), 0, "closing twice is a no-op");
    cr_assert_not(file_exists(a), "not renamed by close");
    char *text = read_file(b, NULL);
    cr_assert_str_eq(text, "old\n", "the target untouched until commit");
    free(text);
    cr_assert_eq(count_files(dir), 3, "b.txt and the two temps");
    cr_assert_eq(kv_afile_commit(&fa, &d), 0);
    kv_afile_abort(&fb); /* a group that failed after closing */
    text = read_file(a, NULL);
    cr_assert_str_eq(text, "A\n");
    free(text);
    text = read_file(b, NULL);
    cr_assert_str_eq(text, "old\n", "abort after close keeps the old file");
    free(text);
    cr_assert_eq(count_files(dir), 2, "no temp left");
    kv_afile_abort(&fa); /* safe after commit */
    free(a);
    free(b);
    rm_rf(dir);
    free(dir);
}

Test(afile, standard_output_and_open_errors)
{
    kv_afile o;
    kv_diag d;
    cr_assert_eq(kv_afile_open(&o, "-", &d), 0);
    cr_assert_eq(o.f, stdout);
    cr_assert_eq(kv_afile_close(&o, &d), 0);
    cr_assert_eq(kv_afile_commit(&o, &d), 0);
    cr_assert_eq(kv_afile_open(&o, "/nonexistent-kvsim-dir/x", &d), -KV_EIO);
    cr_assert_str_eq(d.msg, "cannot create '/nonexistent-kvsim-dir/x': No such file or directory");
    kv_afile_abort(&o);
}
