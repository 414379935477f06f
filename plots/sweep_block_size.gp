# sweep_block_size.gp: sweep.csv metrics against block size (tokens per KV block), one
# line per group of the other knobs, six panels:
#   prefix hit rate; preemptions; mean unique physical blocks as a share of the usable
#   pool (block counts of different block sizes are not comparable, shares are);
#   P99 TTFT; P99 TPOT; output throughput.  A metric that is 0 in every configuration
#   (no preemptions, no prefix hit) is left out and named under the title.
# kvsim draws it only when sweep.csv holds at least two block sizes.  The x axis is log2
# with a tic at each swept block size.  Variables: see sweep_common.gp.
if (!exists("plots")) plots = "plots"
if (!exists("dir")) dir = "."
load plots.'/sweep_common.gp'
name = "sweep_block_size"

metric(k) = k == 1 ? column("hit_rate") * 100 : \
            k == 2 ? column("preemptions") : \
            k == 3 ? column("mean_physical") / (column("num_blocks") - 1) * 100 : \
            k == 4 ? column("ttft_p99_s") : \
            k == 5 ? column("tpot_p99_s") * 1000 : column("output_tok_per_s")
panel_title(k) = word("'prefix cache hit rate' 'preemptions' 'mean pool occupancy' \
                       'P99 time to first token' 'P99 time per output token' \
                       'output throughput'", k)
panel_ylabel(k) = word("'hit rate (% of prompt tokens)' 'preemptions (count)' \
                        'physical blocks (% of usable)' 'TTFT P99 (s)' \
                        'TPOT P99 (ms)' 'throughput (output tokens/s)'", k)

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot title "Metrics against KV block size\n".title_info font ",14"
    panels_all = 6
    @grid_of_panels
    p_drawn = 0
    set logscale x 2
    @set_xvals
    set format x "%g"
    set offsets graph 0.06, graph 0.06, graph 0.08, graph 0.04
    unset key
    do for [k = 1:6] { if (panel_on(k)) {
        set title panel_title(k) font ",12"
        set ylabel panel_ylabel(k)
        set xlabel (p_drawn >= n_panels - grid_cols ? "block size (tokens per block)" : "")
        # Every axis from 0: a sweep is read for how much things change.
        set yrange [0:*]
        set ytics autofreq
        if (k == 2) { count_col = "preemptions"; @count_y }
        @panel_at
        @panel
        plot for [g = 0:ngroups - 1] file \
            using (in_group(g) ? column("block_size") : NaN):(metric(k)) smooth unique \
            with linespoints lw 2 pt gpt(g) ps 1.3 lc rgb group_color(g)
    } }
    @legend_strip
    @house_style
    unset multiplot
    set output
}
