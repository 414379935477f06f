# sweep_watermark.gp: what the admission watermark trades, from sweep.csv, one line per
# group of the other knobs, four panels:
#   preemptions against watermark; watermark deferrals against watermark;
#   the trade-off itself (preemptions against deferrals, the first group's points labelled
#   with their watermark); P99 TTFT against watermark.
# kvsim draws it only when sweep.csv holds at least two watermarks; a metric that is 0 in
# every configuration is left out (the trade-off too, then), the title says so.
# Variables: see sweep_common.gp.
if (!exists("plots")) plots = "plots"
if (!exists("dir")) dir = "."
load plots.'/sweep_common.gp'
name = "sweep_watermark"

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot title "What the admission watermark trades\n".title_info font ",14"
    panels_all = 4
    @grid_of_panels
    gap_x = 0.09
    p_drawn = 0
    set offsets graph 0.04, graph 0.04, graph 0.08, graph 0.04
    unset key
    wm_xlabel = "watermark (fraction of blocks kept free at admission)"

    if (panel_on(1)) {
        @panel_at
        @panel
        @set_xvals
        set format x "%g"
        set title "preemptions" font ",12"
        set ylabel "preemptions (count)"
        set xlabel (p_drawn > n_panels - grid_cols ? wm_xlabel : "")
        count_col = "preemptions"; @count_y
        plot for [g = 0:ngroups - 1] file \
            using (in_group(g) ? column("watermark") : NaN):(column("preemptions")) \
            smooth unique with linespoints lw 2 pt gpt(g) ps 1.3 lc rgb group_color(g)
    }
    if (panel_on(2)) {
        @panel_at
        @panel
        @set_xvals
        set title "watermark deferrals (admissions held back)" font ",12"
        set ylabel "deferrals (count)"
        set xlabel (p_drawn > n_panels - grid_cols ? wm_xlabel : "")
        count_col = "watermark_deferrals"; @count_y
        plot for [g = 0:ngroups - 1] file \
            using (in_group(g) ? column("watermark") : NaN):(column("watermark_deferrals")) \
            smooth unique with linespoints lw 2 pt gpt(g) ps 1.3 lc rgb group_color(g)
    }
    if (panel_on(3)) {
        @panel_at
        @panel
        set title "the trade-off: each point one configuration" font ",12"
        set ylabel "preemptions (count)"
        set xlabel "watermark deferrals (count)"
        set xtics autofreq
        set xrange [0:*]
        count_col = "preemptions"; @count_y
        plot for [g = 0:ngroups - 1] file \
                using (in_group(g) ? column("watermark_deferrals") : NaN):(column("preemptions")) \
                smooth unique with linespoints lw 2 pt gpt(g) ps 1.3 lc rgb group_color(g), \
             file using (in_group(0) ? column("watermark_deferrals") : NaN):(column("preemptions")): \
                (sprintf("wm %s", strcol("watermark"))) with labels left offset 0.8, 0.9 font ",10" \
                tc rgb c_grey
        set autoscale x
    }
    if (panel_on(4)) {
        @panel_at
        @panel
        @set_xvals
        set title "P99 time to first token" font ",12"
        set ylabel "TTFT P99 (s)"
        set xlabel wm_xlabel
        set yrange [0:*]
        set ytics autofreq
        plot for [g = 0:ngroups - 1] file \
            using (in_group(g) ? column("watermark") : NaN):(column("ttft_p99_s")) \
            smooth unique with linespoints lw 2 pt gpt(g) ps 1.3 lc rgb group_color(g)
    }

    @legend_strip
    @house_style
    unset multiplot
    set output
}
