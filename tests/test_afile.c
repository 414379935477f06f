/* afile: the atomic writer's states — a closed file is complete under its temp name and
 * the target untouched until commit; abort after close removes it; a group renames only
 * after every member closed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/afile.h"
#include "kvsim/path.h"
#include "support.h"

/* Files in dir, hidden ones (temps) included, "." and ".." not. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
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
