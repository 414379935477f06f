/* outputs: what a reader of kvsim's outputs may rely on (README "What a reader may rely
 * on"), each promise tested by injecting the fault it is about — a full file system (a
 * private tmpfs, or RLIMIT_FSIZE where mounting is not allowed), a full standard output
 * (/dev/full), special files as targets (FIFOs, symbolic links, /dev/null), a trace on a
 * pipe, signals mid-run, kills at random moments, reruns into old directories — and every
 * error path's exit code and one-line message (issue 12, the output half).
 *
 * The library halves (kv_afile, kv_outdir, kv_proc_run, kv_json_text) are tested in
 * process; the rest through the kvsim binary. */
#define _GNU_SOURCE /* vasprintf */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvsim/afile.h"
#include "kvsim/outdir.h"
#include "kvsim/proc.h"
#include "kvsim/report.h"
#include "support.h"

#define SANITIZED KV_TEST_SANITIZED /* support.h */

KV_TEST_SCRATCH_DIR(setup, teardown)

TestSuite(outputs, .init = setup, .fini = teardown);

/* ---- helpers ------------------------------------------------------------------------ */

static char *pathf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *pathf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    cr_assert(vasprintf(&p, fmt, ap) >= 0);
    va_end(ap);
    return p;
}

/* The entries of d, sorted, joined by ' ' ("" for none; hidden ones included). */
static char *listing(const char *d)
{
    DIR *dd = opendir(d);
    cr_assert(dd, "cannot open %s", d);
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dd)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && n < 256)
            names[n++] = strdup(e->d_name);
    closedir(dd);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, names[i]);
        free(names[i]);
    }
    return s;
}

static void assert_listing(const char *d, const char *want)
{
    char *got = listing(d);
    cr_assert_str_eq(got, want, "%s holds '%s', want '%s'", d, got, want);
    free(got);
}

/* No kvsim temporary (a name holding ".tmp-") anywhere under d, one level deep. */
static void assert_no_temps(const char *d)
{
    DIR *dd = opendir(d);
    cr_assert(dd);
    for (struct dirent *e; (e = readdir(dd)) != NULL;) {
        cr_assert(!strstr(e->d_name, ".tmp-") && !strstr(e->d_name, ".old-"),
                  "temporary left: %s/%s", d, e->d_name);
        char *p = pathf("%s/%s", d, e->d_name);
        struct stat st;
        if (e->d_name[0] != '.' && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            assert_no_temps(p);
        free(p);
    }
    closedir(dd);
}

static bool wait_for_temp(const char *d, const char *needle, double seconds)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    for (double t = 0; t < seconds; t += 0.005) {
        char *l = listing(d);
        bool found = strstr(l, needle) != NULL;
        free(l);
        if (found)
            return true;
        nanosleep(&ts, NULL);
    }
    return false;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static const char *tiny(void)
{
    return src_path("traces/tiny.csv");
}

static const char *shared(void)
{
    return src_path("traces/tiny_shared.jsonl");
}

/* A trace that keeps kvsim busy for about a second (more under the sanitizers). */
static const char *long_trace(void)
{
    return src_path("traces/real/mooncake_fast25_conversation_trace.jsonl");
}

/* Mooncake rows for the fault tests: all of the subset, or under sanitizers its first
 * `sanitized` rows, which still write more than the small file systems below hold; and the
 * pool: llama-3-8b's default on an H100 (28,181 blocks), or 1,000 under sanitizers, where
 * the invariant walk after every step costs O(pool) (a fault test needs outputs larger than
 * its file system, not a large pool: 100 rows on 1,000 blocks write a 1.1 MB timeseries).
 * A fault test costs seconds. */
static const char *moon_rows(const char *sanitized)
{
    return SANITIZED ? sanitized : "500";
}

static const char *moon_pool(void)
{
    return SANITIZED ? KV_TEST_SMALL_BLOCKS : "28181";
}

/* ---- 1. an empty --out ----------------------------------------------------------------- */

Test(outputs, an_empty_out_is_a_usage_error)
{
    const char *t = tiny();
    const char *cases[][12] = {
        {"run", t, "--out", "", NULL},
        {"run", t, "--out=", NULL},
        {"sweep", t, "--out", "", NULL},
        {"sweep", t, "--out", dir, "--emit-jobs", "", NULL},
        {"plan", t, "--slo", "ttft_p99=2s", "--out", "", NULL},
        {"gen", "--prompt", "p50=10", "--output", "p50=5", "--rate", "1", "--requests", "2",
         "--out", "", NULL},
        {"merge", dir, "--out", "", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kvsimv(cases[i]);
        const char *opt = strcmp(cases[i][0], "sweep") == 0 && i == 3 ? "emit-jobs" : "out";
        char want[64];
        snprintf(want, sizeof want, "kvsim: error: --%s: the name is empty\n", opt);
        assert_error_line(&r, 2, want, NULL);
        run_result_free(&r);
    }
    assert_listing(dir, "");
}

Test(outputs, the_library_refuses_empty_names)
{
    kv_diag d;
    cr_assert_eq(kv_mkdir_p("", &d), -KV_EINVAL); /* was a heap overflow */
    cr_assert_str_eq(d.msg, "cannot create directory '': empty name");
    kv_afile a;
    cr_assert_eq(kv_afile_open(&a, "", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "cannot write '': empty file name");
    kv_outdir o;
    cr_assert_eq(kv_outdir_open(&o, "", NULL, NULL, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "the output directory name is empty");
    cr_assert_eq(kv_mkdir_p("/", &d), 0);
}

/* ---- 2. only regular files are replaced ------------------------------------------------ */

/* dir/NAME as a FIFO, a symbolic link (to a file whose text must survive) or nothing. */
static char *make_special(const char *name, char kind)
{
    char *p = pathf("%s/%s", dir, name);
    if (kind == 'p') {
        cr_assert_eq(mkfifo(p, 0644), 0);
    } else {
        char *target = pathf("%s/%s.target", dir, name);
        free(write_file(dir, strrchr(target, '/') + 1, "precious\n"));
        cr_assert_eq(symlink(target, p), 0);
        free(target);
    }
    return p;
}

static void assert_special_kept(const char *p, char kind)
{
    struct stat st;
    cr_assert_eq(lstat(p, &st), 0, "%s is gone", p);
    cr_assert(kind == 'p' ? S_ISFIFO(st.st_mode) : S_ISLNK(st.st_mode), "%s was replaced", p);
    if (kind == 'l') {
        char *target = pathf("%s.target", p);
        char *text = read_file(target, NULL);
        cr_assert_str_eq(text, "precious\n", "the link's target was written through");
        free(text);
        free(target);
    }
}

Test(outputs, afile_refuses_devices_fifos_and_links)
{
    kv_afile a;
    kv_diag d;
    cr_assert_eq(kv_afile_open(&a, "/dev/null", &d), -KV_EIO);
    cr_assert_str_eq(d.msg, "cannot write '/dev/null': it is a character device (kvsim replaces "
                            "only regular files; '-' writes to standard output)");
    char *fifo = make_special("f", 'p');
    cr_assert_eq(kv_afile_open(&a, fifo, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "it is a FIFO (kvsim replaces only regular files"), "%s", d.msg);
    char *link = make_special("l", 'l');
    cr_assert_eq(kv_afile_open(&a, link, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "it is a symbolic link (kvsim replaces only regular files)"), "%s",
              d.msg);
    char *sub = pathf("%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    cr_assert_eq(kv_afile_open(&a, sub, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "Is a directory"), "%s", d.msg);

    /* The target turns into a FIFO between open and commit: refused at the rename. */
    char *late = pathf("%s/late", dir);
    cr_assert_eq(kv_afile_open(&a, late, &d), 0, "%s", d.msg);
    fputs("x\n", a.f);
    cr_assert_eq(mkfifo(late, 0644), 0);
    cr_assert_eq(kv_afile_commit(&a, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "it is a FIFO"), "%s", d.msg);
    assert_special_kept(fifo, 'p');
    assert_special_kept(link, 'l');
    assert_special_kept(late, 'p');
    assert_no_temps(dir);
    free(fifo), free(link), free(sub), free(late);
}

Test(outputs, every_writer_refuses_special_targets)
{
    const char kinds[] = {'p', 'l'};
    for (int k = 0; k < 2; k++) {
        char *gen = make_special(k ? "gen.l" : "gen.p", kinds[k]);
        char *jobs = make_special(k ? "jobs.l" : "jobs.p", kinds[k]);
        char *csv = make_special(k ? "merged.l" : "merged.p", kinds[k]);
        char *sweep_dir = pathf("%s/sw%d", dir, k);
        const char *t = shared();
        const char *gen_args[] = {"gen", "--prompt",   "p50=10", "--output", "p50=5", "--rate",
                                  "1",   "--requests", "2",      "--out",    gen,     NULL};
        run_result r = run_kvsimv(gen_args);
        assert_error_line(&r, 1, "kvsim: error: cannot write '", "(kvsim replaces only regular");
        run_result_free(&r);
        const char *emit_args[] = {"sweep", t, "--out", sweep_dir, "--emit-jobs", jobs, NULL};
        r = run_kvsimv(emit_args);
        assert_error_line(&r, 1, "kvsim: error: cannot write '", "(kvsim replaces only regular");
        run_result_free(&r);
        const char *sweep_args[] = {"sweep",      t,    "--out", sweep_dir, "--time-model",
                                    "fixed:0.01", "-q", NULL};
        r = run_kvsimv(sweep_args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_result_free(&r);
        const char *merge_args[] = {"merge", sweep_dir, "--out", csv, "-q", NULL};
        r = run_kvsimv(merge_args);
        assert_error_line(&r, 1, "kvsim: error: cannot write '", "(kvsim replaces only regular");
        run_result_free(&r);
        assert_special_kept(gen, kinds[k]);
        assert_special_kept(jobs, kinds[k]);
        assert_special_kept(csv, kinds[k]);
        free(gen), free(jobs), free(csv), free(sweep_dir);
    }
    /* "-" is still standard output. */
    run_result r = run_kvsim("gen", "--prompt", "p50=10", "--output", "p50=5", "--rate", "1",
                             "--requests", "2", "--out", "-", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"prompt_len\""), "%s", r.out);
    run_result_free(&r);
    assert_no_temps(dir);
}

Test(outputs, a_run_or_plan_directory_holding_a_special_file_is_refused)
{
    const char *names[] = {"summary.json", "plan.json"};
    for (int k = 0; k < 2; k++) {
        char *d = pathf("%s/d%d", dir, k);
        cr_assert_eq(mkdir(d, 0755), 0);
        char *fifo = pathf("%s/%s", d, names[k]);
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        run_result r = k == 0 ? run_kvsim("run", tiny(), "--out", d, "-q", NULL)
                              : run_kvsim("plan", tiny(), "--slo", "ttft_p99=2s", "--out", d,
                                          "--time-model", "fixed:0.01", "-q", NULL);
        char want[600];
        snprintf(want, sizeof want, "'%s' holds '%s', which kvsim did not write", d, names[k]);
        assert_error_line(&r, 1, "kvsim: error: ", want);
        run_result_free(&r);
        assert_special_kept(fifo, 'p');
        free(fifo), free(d);
    }
    assert_no_temps(dir);
}

Test(outputs, a_figure_over_a_link_or_fifo_is_refused)
{
    char *run = pathf("%s/run", dir);
    run_result r = run_kvsim("run", tiny(), "--out", run, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *png = pathf("%s/blocks.png", run);
    char *target = pathf("%s/precious", dir);
    free(write_file(dir, "precious", "precious\n"));
    cr_assert_eq(symlink(target, png), 0);
    r = run_kvsim("plot", run, NULL);
    assert_error_line(&r, 1, "kvsim: error: cannot write '",
                      "blocks.png': it is a symbolic link (kvsim replaces only regular files)");
    run_result_free(&r);
    char *text = read_file(target, NULL);
    cr_assert_str_eq(text, "precious\n");
    free(text);
    assert_no_temps(run);
    free(run), free(png), free(target);
}

/* ---- 3. a run's files are one unit ------------------------------------------------------- */

Test(outputs, outdir_puts_a_directory_in_place_in_one_step)
{
    static const char *const files[] = {"a.txt", "b.txt", NULL};
    static const char *const figs[] = {"fig", NULL};
    char *target = pathf("%s/out", dir);
    kv_outdir o;
    kv_diag d;
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(kv_outdir_open(&o, target, files, figs, &d), 0, "%s", d.msg);
        free(write_file(o.tmp, "a.txt", round ? "new\n" : "old\n"));
        if (!round) {
            free(write_file(o.tmp, "b.txt", "only in the first\n"));
            free(write_file(o.tmp, "fig.png", "x"));
        }
        const char *p = kv_outdir_path(&o, "a.txt");
        cr_assert(strstr(p, "/.out.tmp-"), "%s", p);
        char *l = listing(dir);
        cr_assert(strstr(l, ".out.tmp-"), "the temporary directory beside DIR: %s", l);
        free(l);
        cr_assert_eq(kv_outdir_commit(&o, &d), 0, "%s", d.msg);
        assert_listing(dir, "out");
    }
    assert_listing(target, "a.txt");
    char *a = pathf("%s/a.txt", target);
    char *text = read_file(a, NULL);
    cr_assert_str_eq(text, "new\n");
    free(text), free(a);

    /* Refusals: a foreign name, a link, the current directory; abort leaves DIR alone. */
    free(write_file(target, "notes.txt", "mine\n"));
    cr_assert_eq(kv_outdir_open(&o, target, files, figs, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "holds 'notes.txt', which kvsim did not write"), "%s", d.msg);
    char *link = pathf("%s/link", dir);
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_eq(kv_outdir_open(&o, link, files, figs, &d), -KV_EIO);
    cr_assert(strstr(d.msg, "it is a symbolic link"), "%s", d.msg);
    cr_assert_eq(kv_outdir_open(&o, ".", files, figs, &d), -KV_EINVAL);
    cr_assert_eq(kv_outdir_open(&o, "/", files, figs, &d), -KV_EINVAL);
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(target), 0); /* the current directory, and one holding it, by name */
    cr_assert_eq(kv_outdir_open(&o, target, files, figs, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "(the current directory or one holding it)"), "%s", d.msg);
    cr_assert_eq(kv_outdir_open(&o, dir, files, figs, &d), -KV_EINVAL);
    cr_assert_eq(kv_outdir_open(&o, "../out", files, figs, &d), -KV_EINVAL);
    cr_assert_eq(chdir(cwd), 0);
    char *sub = pathf("%s/fresh/deeper", dir);
    cr_assert_eq(kv_outdir_open(&o, sub, files, figs, &d), 0, "%s", d.msg);
    kv_outdir_abort(&o);
    cr_assert(!file_exists(sub));
    assert_no_temps(dir);
    free(target), free(link), free(sub);
}

Test(outputs, a_rerun_leaves_nothing_of_the_earlier_run)
{
    char *out = pathf("%s/o", dir);
    run_result r = run_kvsim("run", tiny(), "--out", out, "-q", "--plot", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    free(write_file(out, "stderr.txt", "from a sweep\n"));
    r = run_kvsim("run", tiny(), "--out", out, "-q", "--sample-every", "2", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    assert_listing(out, "perf.json requests.csv summary.json timeseries.csv");
    assert_listing(dir, "o");

    /* A directory of somebody else's is never replaced, nor the current directory. */
    free(write_file(out, "notes.txt", "mine\n"));
    r = run_kvsim("run", tiny(), "--out", out, "-q", NULL);
    char want[600];
    snprintf(want, sizeof want,
             "kvsim: error: '%s' holds 'notes.txt', which kvsim did not write; kvsim replaces "
             "its output directory as a whole: give a new or empty one\n",
             out);
    assert_error_line(&r, 1, want, NULL);
    run_result_free(&r);
    r = run_kvsim("run", tiny(), "--out", ".", "-q", NULL);
    assert_error_line(&r, 1, "kvsim: error: cannot replace '.' as a whole", NULL);
    run_result_free(&r);
    assert_no_temps(dir);
    free(out);
}

/* Kill a rerun with SIGKILL at moments spread over its whole run (the commit included):
 * DIR is always the earlier run's complete set or the new run's, never a mix. */
Test(outputs, a_killed_rerun_never_mixes_two_runs)
{
    const char *limit = SANITIZED ? "30" : "300";
    const int kills = SANITIZED ? 4 : 8; /* spread over the run, the last ones after it */
    const char *files[] = {"summary.json", "timeseries.csv", "requests.csv"};
    char *ref[2], *out = pathf("%s/o", dir);
    const char *wm[2] = {"0.01", "0.05"};
    for (int k = 0; k < 2; k++) {
        ref[k] = pathf("%s/ref%d", dir, k);
        run_result r = run_kvsim("run", long_trace(), "--limit", limit, "--num-blocks",
                                 moon_pool(), "--watermark", wm[k], "--out", ref[k], "-q", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_result_free(&r);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_result r = run_kvsim("run", long_trace(), "--limit", limit, "--num-blocks", moon_pool(),
                             "--watermark", wm[0], "--out", out, "-q", NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_eq(r.status, 0);
    run_result_free(&r);
    long full_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    int news = 0;
    for (int i = 1; i <= kills; i++) {
        const char *args[] = {"run",         long_trace(), "--limit",     limit,
                              "--num-blocks", moon_pool(), "--watermark", wm[1],
                              "--out",       out,          "-q",          NULL};
        run_opts o = {0};
        kvsim_child c = start_kvsim(&o, args);
        sleep_ms(full_ms * i / (kills - 2));
        kill(c.pid, SIGKILL);
        r = finish_kvsim(&c);
        int which = -1;
        for (int k = 0; k < 2 && which < 0; k++) {
            bool all = true;
            for (int f = 0; f < 3; f++) {
                char *a = pathf("%s/%s", out, files[f]), *b = pathf("%s/%s", ref[k], files[f]);
                all &= same_output(a, b);
                free(a), free(b);
            }
            if (all)
                which = k;
        }
        cr_assert_geq(which, 0, "kill %d (exit %d): '%s' mixes two runs", i, r.status, out);
        news += which;
        run_result_free(&r);
        if (which == 1) { /* back to the earlier run for the next kill */
            r = run_kvsim("run", long_trace(), "--limit", limit, "--num-blocks", moon_pool(),
                          "--watermark", wm[0], "--out", out, "-q", NULL);
            cr_assert_eq(r.status, 0);
            run_result_free(&r);
        }
    }
    /* Which kills came after the commit depends on the machine's load: not asserted. */
    cr_log_info("%d of %d kills found the new run", news, kills);
    /* SIGKILL cannot be cleaned up after: it leaves hidden temporaries beside DIR, never
     * inside it. */
    char *l = listing(out);
    cr_assert(!strstr(l, ".tmp-"), "%s", l);
    free(l);
    for (int k = 0; k < 2; k++)
        free(ref[k]);
    free(out);
}

Test(outputs, a_failed_rerun_keeps_the_earlier_run_whole)
{
    char *fs = mount_small_tmpfs(256 * 1024);
    if (!fs)
        cr_skip_test("cannot mount a private tmpfs here");
    /* A mount point cannot be renamed: refused at once, with what to do instead. */
    run_result r = run_kvsim("run", tiny(), "--out", fs, "-q", NULL);
    char msg[600];
    snprintf(msg, sizeof msg,
             "kvsim: error: cannot replace '%s' as a whole: it is a mount point; give the output "
             "a directory inside it\n",
             fs);
    assert_error_line(&r, 1, msg, NULL);
    run_result_free(&r);
    assert_listing(fs, "");
    char *out = pathf("%s/o", fs);
    r = run_kvsim("run", tiny(), "--out", out, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *before = listing(out);
    char *sj = pathf("%s/summary.json", out);
    char *old = read_file(sj, NULL);
    /* A rerun that cannot fit: it fails, and the earlier run is there as it was. */
    r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", moon_rows("200"),
                  "--num-blocks", moon_pool(), "--out", out, "-q", NULL);
    char want[600];
    snprintf(want, sizeof want, "kvsim: error: cannot write '%s/timeseries.csv': No space left",
             out);
    assert_error_line(&r, 1, want, NULL);
    run_result_free(&r);
    assert_listing(out, before);
    char *now = read_file(sj, NULL);
    cr_assert_str_eq(now, old);
    assert_listing(fs, "o");
    free(before), free(sj), free(old), free(now), free(out);
    unmount_small_tmpfs(fs);
}

Test(outputs, write_errors_name_the_reason_under_a_file_size_limit)
{
    char *out = pathf("%s/o", dir);
    const char *args[] = {"run",        src_path("traces/mooncake_conv_500.jsonl"),
                          "--limit",    moon_rows("100"),
                          "--num-blocks", moon_pool(),
                          "--out",      out,
                          "-q",         NULL};
    run_opts o = {.fsize_limit = 16384};
    run_result r = run_kvsim_opts(&o, args);
    char want[600];
    snprintf(want, sizeof want, "kvsim: error: cannot write '%s/timeseries.csv': File too large\n",
             out);
    assert_error_line(&r, 1, want, NULL);
    run_result_free(&r);
    assert_listing(dir, "");
    free(out);
}

/* ---- 4. sweeps and merges do not mix ------------------------------------------------------ */

Test(outputs, a_second_sweep_needs_force)
{
    char *sw = pathf("%s/sw", dir);
    run_result r = run_kvsim("sweep", shared(), "--out", sw, "--watermark", "0,0.01",
                             "--time-model", "fixed:0.01", "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim("sweep", shared(), "--out", sw, "--watermark", "0.05", "--time-model",
                  "fixed:0.01", "-q", NULL);
    char want[600];
    snprintf(want, sizeof want, "kvsim: error: '%s' is not empty (it holds '", sw);
    assert_error_line(&r, 1, want, "an earlier sweep?): give a new directory, or --force");
    run_result_free(&r);
    r = run_kvsim("sweep", shared(), "--out", sw, "--watermark", "0.05", "--time-model",
                  "fixed:0.01", "-q", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    assert_listing(sw, "b16_wm0.05_split_s256_fcfs sweep.csv");

    /* --force removes only what a sweep wrote: anything else and nothing is removed.  The
     * stranger's name sorts after the run's files (walks go in name order), so a removal
     * that did not check everything first would have removed those already. */
    char *cfg = pathf("%s/b16_wm0.05_split_s256_fcfs", sw);
    free(write_file(cfg, "z-notes.txt", "mine\n"));
    r = run_kvsim("sweep", shared(), "--out", sw, "--time-model", "fixed:0.01", "-q", "--force",
                  NULL);
    snprintf(want, sizeof want, "kvsim: error: '%s/z-notes.txt' was not written by kvsim sweep",
             cfg);
    assert_error_line(&r, 1, want, NULL);
    run_result_free(&r);
    assert_listing(cfg, "perf.json requests.csv summary.json timeseries.csv z-notes.txt");
    assert_listing(sw, "b16_wm0.05_split_s256_fcfs sweep.csv");
    free(cfg), free(sw);
}

Test(outputs, merge_keeps_two_traces_or_two_models_apart_by_their_columns)
{
    char *a = pathf("%s/a", dir), *b = pathf("%s/b", dir), *c = pathf("%s/c", dir);
    const char *tm = "fixed:0.01";
    run_result r = run_kvsim("sweep", shared(), "--out", a, "--time-model", tm, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim("sweep", tiny(), "--out", b, "--time-model", tm, "--watermark", "0.05", "-q",
                  NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim("sweep", shared(), "--out", c, "--time-model", tm, "--watermark", "0.05",
                  "--model", "llama-2-7b", "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    /* sweep.csv has a column for every option, the trace and the model included: rows of
     * two workloads or two models sit side by side, each saying what ran. */
    char *csv = pathf("%s/all.csv", dir);
    r = run_kvsim("merge", a, b, c, "--out", csv, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *text = read_file(csv, NULL);
    cr_assert(text && strstr(text, ",model,gpu,tp,pp,kv_dtype,") && strstr(text, ",trace,format,"),
              "%s", text);
    cr_assert(strstr(text, ",llama-3-8b,") && strstr(text, ",llama-2-7b,"), "%s", text);
    char *t1 = realpath(shared(), NULL), *t2 = realpath(tiny(), NULL);
    cr_assert(strstr(text, t1) && strstr(text, t2), "both traces, as the files they name");
    free(t1), free(t2), free(text);
    /* The same workload from two directories merges, the trace named two ways. */
    char *rel = pathf("%s/rel", dir);
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(src_path("")), 0);
    r = run_kvsim("sweep", "traces/tiny_shared.jsonl", "--out", rel, "--time-model", tm,
                  "--watermark", "0.05", "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim("merge", a, rel, "--out", csv, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    cr_assert_eq(chdir(cwd), 0);
    free(a), free(b), free(c), free(csv), free(rel);
}

/* ---- 5. figures on a full file system ------------------------------------------------------ */

static char *fake_gnuplot(const char *body)
{
    /* gnuplot -e "dir = '…'; outdir = '…'; plots = '…'; suffix = '…'; …" SCRIPT */
    char *text = pathf("#!/bin/sh\n"
                       "out=$(printf '%%s' \"$2\" | sed \"s/.*outdir = '\\([^']*\\)'.*/\\1/\")\n"
                       "suf=$(printf '%%s' \"$2\" | sed \"s/.*suffix = '\\([^']*\\)'.*/\\1/\")\n"
                       "name=$(basename \"$3\" .gp)\n"
                       "png=\"$out/$name.png$suf\"; svg=\"$out/$name.svg$suf\"\n"
                       "%s\n"
                       "exit 0\n",
                       body);
    char *p = write_file(dir, "fake-gnuplot", text);
    chmod(p, 0755);
    free(text);
    return p;
}

Test(outputs, incomplete_figures_are_errors_not_figures)
{
    char *run = pathf("%s/run", dir);
    run_result r = run_kvsim("run", tiny(), "--out", run, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    struct {
        const char *body, *why;
    } cases[] = {
        {": > \"$png\"; : > \"$svg\"", "blocks.png' completely (empty; is the file system full?)"},
        {"printf '\\211PNG\\r\\n\\032\\nIHDR' > \"$png\"; echo '<svg>' > \"$svg\"",
         "blocks.png' completely (truncated: no PNG end chunk;"},
        {"printf 'GIF89a' > \"$png\"; echo '<svg>' > \"$svg\"",
         "blocks.png' completely (no PNG signature;"},
        {"printf '\\211PNG\\r\\n\\032\\n\\0\\0\\0\\0IEND\\256B`\\202' > \"$png\"; "
         "printf '<svg>\\n<g>' > \"$svg\"",
         "blocks.svg' completely (truncated: no closing </svg> tag;"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *fake = fake_gnuplot(cases[i].body);
        char *var = pathf("KVSIM_GNUPLOT=%s", fake);
        const char *env[] = {var, NULL};
        const char *args[] = {"plot", run, NULL};
        r = run_kvsim_env(env, args);
        char want[600];
        snprintf(want, sizeof want, "kvsim: error: gnuplot did not write '%s/", run);
        assert_error_line(&r, 1, want, cases[i].why);
        run_result_free(&r);
        assert_listing(run, "perf.json requests.csv summary.json timeseries.csv");
        free(var), free(fake);
    }
    /* A complete pair is accepted (trailing blanks after </svg> too). */
    char *fake = fake_gnuplot("printf '\\211PNG\\r\\n\\032\\n\\0\\0\\0\\0IEND\\256B`\\202' > "
                              "\"$png\"; printf '<svg>\\n</svg>\\n\\n' > \"$svg\"");
    char *var = pathf("KVSIM_GNUPLOT=%s", fake);
    const char *env[] = {var, NULL};
    const char *args[] = {"plot", run, NULL};
    r = run_kvsim_env(env, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "figures in "), "%s", r.out);
    run_result_free(&r);
    free(var), free(fake), free(run);
}

Test(outputs, plot_on_a_full_file_system_says_so)
{
    char *gp = NULL;
    if (access("/usr/bin/gnuplot", X_OK) == 0)
        gp = "/usr/bin/gnuplot";
    if (!gp)
        cr_skip_test("no gnuplot");
    char *run = pathf("%s/run", dir);
    run_result r = run_kvsim("run", tiny(), "--out", run, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    /* A file size limit below the data kvsim reduces timeseries.csv to (467 rows, written
     * row by row): its own write fails first, one error line naming the file. */
    const char *args[] = {"plot", run, NULL};
    run_opts o = {.fsize_limit = 8192};
    r = run_kvsim_opts(&o, args);
    assert_error_line(&r, 1, "kvsim: error: cannot write '", "series.dat.tmp-");
    run_result_free(&r);
    assert_listing(run, "perf.json requests.csv summary.json timeseries.csv");
    /* A sparser timeseries (data files of a few hundred bytes), the same limit below a
     * figure's size: gnuplot's writes fail, it exits 0. */
    r = run_kvsim("run", tiny(), "--sample-every", "100", "--out", run, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim_opts(&o, args);
    assert_error_line(&r, 1, "kvsim: error: gnuplot did not write '", "completely (");
    run_result_free(&r);
    assert_listing(run, "perf.json requests.csv summary.json timeseries.csv");

    char *fs = mount_small_tmpfs(64 * 1024);
    if (!fs) {
        free(run);
        return;
    }
    char *out = pathf("%s/o", fs);
    r = run_kvsim("run", tiny(), "--sample-every", "100", "--out", out, "-q", "--plot", NULL);
    assert_error_line(&r, 1, "kvsim: error: gnuplot did not write '", "is the file system full?)");
    run_result_free(&r);
    char *l = listing(out);
    cr_assert(!strstr(l, ".png") && !strstr(l, ".svg") && !strstr(l, ".tmp-"),
              "no figure, whole or partial, under its name: %s", l);
    free(l);
    free(out), free(run);
    unmount_small_tmpfs(fs);
}

/* ---- 6. a child's message survives a full disk --------------------------------------------- */

Test(outputs, proc_keeps_what_a_child_says_in_memory)
{
    char *big = pathf("i=0; while [ $i -lt 4000 ]; do echo \"line $i of the noise\" >&2; "
                      "i=$((i+1)); done; echo last >&2; exit 3");
    char *argv0[] = {"sh", "-c", "echo 'kvsim: error: the reason' >&2; exit 1", NULL};
    char *argv1[] = {"sh", "-c", big, NULL};
    char *argv2[] = {"sh", "-c", "kill -TERM $$", NULL};
    char *argv3[] = {"sh", "-c", "exit 0", NULL};
    kv_job jobs[4] = {{.program = "/bin/sh", .argv = argv0},
                      {.program = "/bin/sh", .argv = argv1},
                      {.program = "/bin/sh", .argv = argv2},
                      {.program = "/bin/sh", .argv = argv3}};
    kv_proc_run(jobs, 4, 2, NULL, NULL);
    cr_assert_eq(jobs[0].exit_code, 1);
    cr_assert_str_eq(jobs[0].err, "kvsim: error: the reason\n");
    cr_assert_str_eq(jobs[0].failure, "exit 1: the reason");
    cr_assert_eq(jobs[1].exit_code, 3);
    cr_assert(strncmp(jobs[1].err, "line 0 of the noise\n", 20) == 0);
    cr_assert(strstr(jobs[1].err, "bytes not kept ...]\n"), "the middle is dropped");
    cr_assert(strcmp(jobs[1].err + jobs[1].err_len - 5, "last\n") == 0, "the tail is kept");
    cr_assert_leq(jobs[1].err_len, KV_PROC_ERR_HEAD + KV_PROC_ERR_TAIL + 64);
    cr_assert_str_eq(jobs[1].failure, "exit 3: line 0 of the noise");
    cr_assert_eq(jobs[2].signal, SIGTERM);
    cr_assert(strstr(jobs[2].failure, "killed by signal 15"), "%s", jobs[2].failure);
    cr_assert(strstr(jobs[2].failure, "(nothing on stderr)"), "%s", jobs[2].failure);
    cr_assert_eq(jobs[3].exit_code, 0);
    cr_assert_null(jobs[3].err);
    cr_assert_null(jobs[3].failure);
    for (int i = 0; i < 4; i++)
        kv_job_release(&jobs[i]);
    free(big);
}

Test(outputs, sweep_failures_keep_their_message_on_a_full_disk)
{
    char *fs = mount_small_tmpfs(128 * 1024);
    if (!fs)
        cr_skip_test("cannot mount a private tmpfs here");
    char *sw = pathf("%s/sw", fs);
    run_result r = run_kvsim("sweep", src_path("traces/mooncake_conv_500.jsonl"), "--limit",
                             moon_rows("100"), "--num-blocks", moon_pool(), "--out", sw,
                             "--watermark", "0,0.01", "-q", NULL);
    cr_assert_eq(r.status, 1);
    cr_assert(!strstr(r.err, "nothing on stderr"), "%s", r.err);
    char want[600];
    snprintf(want, sizeof want,
             "kvsim: error: configuration 'b16_n%s_wm0_split_s256_fcfs' failed, exit 1: cannot "
             "write '%s/b16_n%s_wm0_split_s256_fcfs/timeseries.csv': No space left on device (",
             moon_pool(), sw, moon_pool());
    cr_assert(strstr(r.err, want), "%s", r.err);
    run_result_free(&r);
    free(sw);
    unmount_small_tmpfs(fs);
}

/* ---- 7. signals ---------------------------------------------------------------------------- */

Test(outputs, merge_skips_the_temporary_directory_of_a_killed_run)
{
    char *sw = pathf("%s/sw", dir);
    run_result r =
        run_kvsim("sweep", shared(), "--out", sw, "--time-model", "fixed:0.01", "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    /* What a SIGKILL during a configuration's commit leaves: its files, complete, in a
     * hidden directory beside it. */
    char *cfg = pathf("%s/b16_wm0.01_split_s256_fcfs", sw);
    char *hidden = pathf("%s/.b16_wm0.01_split_s256_fcfs.tmp-KILLED", sw);
    char *cmd = pathf("cp -r '%s' '%s'", cfg, hidden);
    cr_assert_eq(system(cmd), 0);
    char *csv = pathf("%s/sweep.csv", sw), *again = pathf("%s/again.csv", dir);
    r = run_kvsim("merge", sw, "--out", again, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    cr_assert(same_output(csv, again), "one row, not two");
    /* --force clears it with the rest. */
    r = run_kvsim("sweep", shared(), "--out", sw, "--time-model", "fixed:0.01", "-q", "--force",
                  NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    assert_listing(sw, "b16_wm0.01_split_s256_fcfs sweep.csv");
    free(sw), free(cfg), free(hidden), free(cmd), free(csv), free(again);
}

static void interrupt_mid_run(const char *const *args, const char *where, const char *needle,
                              int sig, const char *line)
{
    run_opts o = {0};
    kvsim_child c = start_kvsim(&o, args);
    cr_assert(wait_for_temp(where, needle, SANITIZED ? 60 : 20), "no temporary appeared in %s",
              where);
    sleep_ms(50);
    kill(c.pid, sig);
    run_result r = finish_kvsim(&c);
    assert_error_line(&r, 128 + sig, line, NULL);
    run_result_free(&r);
    assert_no_temps(dir);
}

Test(outputs, sigint_mid_run_removes_its_temporaries)
{
    char *out = pathf("%s/o", dir);
    const char *args[] = {"run", long_trace(), "--out", out, "-q", NULL};
    interrupt_mid_run(args, dir, ".o.tmp-", SIGINT,
                      "kvsim: error: interrupted (SIGINT); temporary files removed\n");
    assert_listing(dir, "");
    /* A rerun interrupted leaves the earlier run as it was. */
    run_result r = run_kvsim("run", tiny(), "--out", out, "-q", NULL);
    cr_assert_eq(r.status, 0);
    run_result_free(&r);
    interrupt_mid_run(args, dir, ".o.tmp-", SIGTERM,
                      "kvsim: error: terminated (SIGTERM); temporary files removed\n");
    assert_listing(dir, "o");
    assert_listing(out, "perf.json requests.csv summary.json timeseries.csv");
    free(out);
}

Test(outputs, sigterm_mid_gen_removes_the_temp_file)
{
    char *out = pathf("%s/t.jsonl", dir);
    const char *args[] = {"gen", "--prompt",   "p50=100",  "--output", "p50=10", "--rate",
                          "100", "--requests", "50000000", "--out",    out,      NULL};
    interrupt_mid_run(args, dir, ".t.jsonl.tmp-", SIGTERM,
                      "kvsim: error: terminated (SIGTERM); temporary files removed\n");
    assert_listing(dir, "");
    free(out);
}

/* A kv_job.fn child: a fork running the function on the argv, with the descriptors a
 * spawned child gets (stdout /dev/null, stderr the pipe, nothing else open) and the
 * parent's memory; its return value is the exit status. */
static int fd_probe = -1;

static int child_fn(void *ctx, char *const *argv)
{
    const char *what = argv[1];
    if (strcmp(what, "say") == 0) {
        fprintf(stderr, "kvsim: error: from %s\n", (const char *)ctx);
        return 4;
    }
    if (strcmp(what, "fds") == 0) /* the parent's other descriptor is not open here */
        return fcntl(fd_probe, F_GETFD) < 0 && errno == EBADF && printf("lost\n") > 0 ? 0 : 9;
    if (strcmp(what, "signal") == 0)
        raise(SIGTERM);
    return 0;
}

Test(outputs, proc_runs_a_function_in_a_forked_child)
{
    fd_probe = open("/dev/null", O_RDONLY);
    cr_assert_geq(fd_probe, 3);
    char *say[] = {"kvsim", "say", NULL}, *fds[] = {"kvsim", "fds", NULL};
    char *sig[] = {"kvsim", "signal", NULL}, *ok[] = {"kvsim", "ok", NULL};
    char ctx[] = "the parent's memory";
    kv_job jobs[4] = {{.argv = say, .fn = child_fn, .ctx = ctx},
                      {.argv = fds, .fn = child_fn},
                      {.argv = sig, .fn = child_fn},
                      {.argv = ok, .fn = child_fn}};
    kv_proc_run(jobs, 4, 2, NULL, NULL);
    cr_assert_eq(jobs[0].exit_code, 4);
    cr_assert_str_eq(jobs[0].err, "kvsim: error: from the parent's memory\n");
    cr_assert_str_eq(jobs[0].failure, "exit 4: from the parent's memory");
    cr_assert_eq(jobs[1].exit_code, 0, "stdout went to /dev/null, no other descriptor open");
    cr_assert_null(jobs[1].err);
    cr_assert_eq(jobs[2].signal, SIGTERM);
    cr_assert_eq(jobs[3].exit_code, 0);
    cr_assert_null(jobs[3].failure);
    for (int i = 0; i < 4; i++)
        kv_job_release(&jobs[i]);
    close(fd_probe);
}

/* From here on this process (criterion runs each test in its own) cannot create a process:
 * clone, clone3, fork and vfork fail with EAGAIN, as at a process limit.  False where the
 * kernel has no seccomp filters. */
static bool forbid_new_processes(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fork, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_vfork, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAGAIN & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* A job that cannot start (a sweep configuration's fork, gnuplot's spawn) fails alone with
 * the reason, and the runner goes on. */
Test(outputs, proc_reports_a_child_that_cannot_start)
{
    if (!forbid_new_processes())
        cr_skip_test("no seccomp filters here: %s", strerror(errno));
    char *ok[] = {"kvsim", "ok", NULL}, *gp[] = {"gnuplot", NULL};
    kv_job jobs[2] = {{.argv = ok, .fn = child_fn}, {.argv = gp, .program = "/bin/true"}};
    kv_proc_run(jobs, 2, 2, NULL, NULL);
    cr_assert_str_eq(jobs[0].failure, "cannot fork 'kvsim': Resource temporarily unavailable");
    cr_assert_str_eq(jobs[1].failure,
                     "cannot execute '/bin/true': Resource temporarily unavailable");
    for (int i = 0; i < 2; i++)
        kv_job_release(&jobs[i]);
}

Test(outputs, sigint_mid_sweep_stops_every_configuration)
{
    char *sw = pathf("%s/sw", dir);
    const char *args[] = {"sweep",  long_trace(), "--out", sw,   "--watermark",
                          "0,0.01", "-j",         "2",     "-q", NULL};
    run_opts o = {0};
    kvsim_child c = start_kvsim(&o, args);
    cr_assert(wait_for_temp(dir, "sw", 20));
    for (int i = 0; i < 4000; i++) { /* both configurations under way */
        char *l = listing(sw);
        int n = 0;
        for (char *p = l; (p = strstr(p, ".tmp-")); p++)
            n++;
        free(l);
        if (n >= 2)
            break;
        sleep_ms(5);
    }
    kill(c.pid, SIGINT); /* the sweep only, not its process group */
    run_result r = finish_kvsim(&c);
    assert_error_line(&r, 130, "kvsim: error: interrupted (SIGINT); temporary files removed\n",
                      NULL);
    run_result_free(&r);
    /* Every configuration was stopped, and cleaned up after itself, before sweep ended:
     * none is left running to commit its directory later. */
    assert_no_temps(dir);
    sleep_ms(SANITIZED ? 6000 : 2500);
    assert_listing(sw, "");
    free(sw);
}

Test(outputs, sigint_mid_plan_removes_its_temporary_directory)
{
    char *out = pathf("%s/p", dir);
    const char *args[] = {"plan", long_trace(), "--slo", "ttft_p99=2s", "--out", out, "-q", NULL};
    interrupt_mid_run(args, dir, ".p.tmp-", SIGINT,
                      "kvsim: error: interrupted (SIGINT); temporary files removed\n");
    assert_listing(dir, "");
    free(out);
}

/* ---- 8. text that is not UTF-8 --------------------------------------------------------------- */

Test(outputs, json_text_replaces_what_is_not_utf8)
{
    struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\xff"
         "b",
         "a\xef\xbf\xbd"
         "b"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                                 /* overlong '/' */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                 /* a surrogate */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* > U+10FFFF */
        {"end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"},                           /* cut short */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = kv_json_text(cases[i].in);
        cr_assert(j, "case %zu dropped", i);
        cr_assert_str_eq(json_string_value(j), cases[i].out, "case %zu", i);
        json_decref(j);
    }
    json_t *j = kv_json_text(NULL);
    cr_assert_str_eq(json_string_value(j), "");
    json_decref(j);
}

Test(outputs, a_trace_path_that_is_not_utf8_keeps_config_trace)
{
    char *trace = pathf("%s/t\xff.csv", dir);
    char *text = read_file(tiny(), NULL);
    free(write_file(dir, "t\xff.csv", text));
    free(text);
    char *out = pathf("%s/o", dir), *plan = pathf("%s/p", dir);
    run_result r = run_kvsim("run", trace, "--out", out, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *sj = pathf("%s/summary.json", out);
    json_error_t je;
    json_t *s = json_load_file(sj, 0, &je);
    cr_assert(s, "%s", je.text);
    const char *got = json_string_value(json_object_get(json_object_get(s, "config"), "trace"));
    char *want = pathf("%s/t\xef\xbf\xbd.csv", dir);
    cr_assert(got, "config.trace dropped");
    cr_assert_str_eq(got, want);
    json_decref(s);
    r = run_kvsim("plan", trace, "--slo", "ttft_p99=2s", "--time-model", "fixed:0.01", "--out",
                  plan, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *pj = pathf("%s/plan.json", plan);
    s = json_load_file(pj, 0, &je);
    cr_assert(s, "%s", je.text);
    cr_assert_str_eq(json_string_value(json_object_get(s, "trace")), want);
    json_decref(s);
    /* merge reads it back through the schema. */
    r = run_kvsim("merge", out, "--out", "-", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    free(trace), free(out), free(plan), free(sj), free(want), free(pj);
}

/* ---- 10. plan checks --out first ------------------------------------------------------------ */

Test(outputs, plan_checks_out_before_the_first_replay)
{
    /* A replay that fails (its steps overflow the clock): the --out error comes first, so
     * no replay ran. */
    const char *late = tiny();
    char *blocker = write_file(dir, "file", "x");
    char *bad = pathf("%s/sub", blocker);
    const char *tm = "linear:1e9,1e9,1e9";
    run_result r =
        run_kvsim("plan", late, "--slo", "ttft_p99=2s", "--time-model", tm, "--out", bad, NULL);
    char want[600];
    snprintf(want, sizeof want, "kvsim: error: cannot create directory '%s': Not a directory\n",
             bad);
    assert_error_line(&r, 1, want, NULL);
    run_result_free(&r);
    char *d = pathf("%s/o", dir);
    cr_assert_eq(mkdir(d, 0755), 0);
    free(write_file(d, "notes.txt", "mine\n"));
    r = run_kvsim("plan", late, "--slo", "ttft_p99=2s", "--time-model", tm, "--out", d, NULL);
    assert_error_line(&r, 1, "kvsim: error: ", "holds 'notes.txt', which kvsim did not write");
    run_result_free(&r);
    /* A usable DIR: the replay's own error, and nothing left in DIR's place. */
    char *fresh = pathf("%s/fresh", dir);
    r = run_kvsim("plan", late, "--slo", "ttft_p99=2s", "--time-model", tm, "--out", fresh, NULL);
    assert_error_line(&r, 1, "kvsim: error: ", "the simulated clock passed 2^63 ns");
    run_result_free(&r);
    cr_assert(!file_exists(fresh));
    assert_no_temps(dir);
    free(blocker), free(bad), free(d), free(fresh);
}

/* ---- 11. --help and --version on a full standard output ------------------------------------- */

Test(outputs, help_and_version_check_standard_output)
{
    const char *cases[][4] = {
        {"--help", NULL},        {"-h", NULL},          {"help", NULL},     {"--version", NULL},
        {"run", "--help", NULL}, {"sweep", "-h", NULL}, {"estimate", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_opts o = {.stdout_path = "/dev/full"};
        run_result r = run_kvsim_opts(&o, cases[i]);
        assert_error_line(&r, 1,
                          "kvsim: error: cannot write to standard output: No space left on "
                          "device\n",
                          NULL);
        run_result_free(&r);
    }
}

/* ---- 12. a trace on a pipe ---------------------------------------------------------------------
 */

Test(outputs, sweep_reads_a_trace_on_a_pipe_once)
{
    char *text = read_file(shared(), NULL);
    char *a = pathf("%s/from-file", dir), *b = pathf("%s/from-pipe", dir),
         *c = pathf("%s/from-stdin", dir);
    const char *file_args[] = {"sweep",  shared(),       "--out",      a,    "--watermark",
                               "0,0.01", "--time-model", "fixed:0.01", "-q", NULL};
    run_result r = run_kvsimv(file_args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    /* A pipe, and /dev/stdin redirected from a regular file (the configurations have other
     * descriptors: they could not read it either). */
    run_opts pipe_in = {.stdin_text = text};
    run_opts file_in = {.stdin_path = shared()};
    const char *outs[2] = {b, c};
    run_opts *ins[2] = {&pipe_in, &file_in};
    for (int k = 0; k < 2; k++) {
        const char *args[] = {"sweep",  "/dev/stdin",   "--out",      outs[k], "--watermark",
                              "0,0.01", "--time-model", "fixed:0.01", NULL};
        r = run_kvsim_opts(ins[k], args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        char want[600];
        snprintf(want, sizeof want,
                 "  trace      read once into %s/trace (it cannot be read twice)", outs[k]);
        cr_assert(strstr(r.out, want), "%s", r.out);
        run_result_free(&r);
        char *copy = pathf("%s/trace", outs[k]);
        cr_assert(same_output(copy, shared()), "the copy holds the trace's bytes");
        free(copy);
        /* Every row as the file's, but for the dir column. */
        for (int w = 0; w < 2; w++) {
            const char *name = w ? "b16_wm0.01_split_s256_fcfs" : "b16_wm0_split_s256_fcfs";
            char *x = pathf("%s/%s/requests.csv", a, name),
                 *y = pathf("%s/%s/requests.csv", outs[k], name);
            cr_assert(same_output(x, y), "%s differs", y);
            free(x), free(y);
        }
    }
    /* A trace on a pipe that turns out malformed: one error, nothing left behind. */
    char *d = pathf("%s/bad", dir);
    run_opts bad_in = {.stdin_text = "{\"arrival\": 0, \"prompt_len\": 4}\n"};
    const char *args[] = {"sweep", "/dev/stdin", "--out", d, NULL};
    r = run_kvsim_opts(&bad_in, args);
    assert_error_line(&r, 1, "kvsim: error: ", "'output_len'");
    run_result_free(&r);
    cr_assert(!file_exists(d), "the directory made for the copy is removed again");
    free(text), free(a), free(b), free(c), free(d);
}
