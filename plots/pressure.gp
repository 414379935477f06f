# pressure.gp: scheduler pressure over time, three panels sharing the time axis:
#   1. preemptions per interval (a running request lost its blocks and went back to wait)
#   2. watermark deferrals per interval (a waiting request was held back because admitting
#      it would leave fewer than W free blocks)
#   3. running and waiting queue lengths
# kvsim reduces timeseries.csv first (src/plot_series.c): the bins data file holds, per
# time bin (a 1-2-5 width giving about 100 bins), its centre and the increase of the
# cumulative preemptions and watermark_deferrals counters in it, exactly, whatever
# --sample-every was; the series file the queues (columns 11-13 running, 14-16 waiting:
# min, max, mean per pixel column of a long run; blocks.gp describes the layout).
#
# Variables (kvsim passes them; each but the data files is optional):
#   data, data_bins      the series and bins data files
#   title_info           the title (blocks.gp)
#   t_end                simulated seconds (summary.json sim_time_s)
#   bin_s                the bins' width in seconds;  pre_max, def_max  the largest bins
#   queue_max            the longest queue (for the y tics)
#   n_preempt, n_defer   totals from summary.json, for the panel labels
#   nrows, thinned       as in blocks.gp (a long run's queues are bands under mean lines)
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "pressure"
if (!exists("data")) data = dir.'/series.dat'
if (!exists("data_bins")) data_bins = dir.'/bins.dat'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) nrows = 1
if (!exists("thinned")) thinned = 0
if (!exists("t_end")) t_end = 1
if (!exists("bin_s")) bin_s = nice125(t_end / 100.0)
if (!exists("pre_max")) pre_max = 0
if (!exists("def_max")) def_max = 0
if (!exists("queue_max")) queue_max = 0
bin_label = (bin_s >= 1 ? sprintf("%g s", bin_s) : sprintf("%g ms", bin_s * 1000))
total_label(n, what) = exists(n) ? sprintf("%s %s in total", commas(value(n)), what) : what
set datafile separator whitespace

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot layout 3, 1 title "Scheduler pressure over time\n".title_info font ",14" \
        margins 0.085, 0.975, 0.09, 0.87 - top_shift spacing 0, 0.045
    set xrange [0:t_end]
    set boxwidth bin_s * 0.85 absolute
    set style fill solid 0.85 noborder
    set format x ""
    unset xlabel
    set key top right opaque box lc rgb "#bbbbbb" samplen 2

    # 1. preemptions per bin
    set ylabel sprintf("preemptions\nper %s", bin_label)
    set yrange [0:(pre_max > 0 ? pre_max * 1.4 : 1)]
    ymax_v = pre_max
    @si_ytics
    if (nrows == 0) {
        set label 1 "no steps were simulated: timeseries.csv has no rows" at graph 0.5, 0.5 center
    } else {
        if (pre_max == 0) { set label 1 "no preemptions in this run" at graph 0.5, 0.5 center }
    }
    if (pre_max > 0) { set key } else { unset key }
    plot data_bins using 1:2 with boxes lc rgb c_red \
        title (pre_max > 0 ? total_label("n_preempt", "preemptions") : "")
    unset label 1

    # 2. watermark deferrals per bin
    set ylabel sprintf("deferrals\nper %s", bin_label)
    set yrange [0:(def_max > 0 ? def_max * 1.4 : 1)]
    ymax_v = def_max
    @si_ytics
    if (nrows > 0 && def_max == 0) {
        set label 1 "no watermark deferrals in this run" \
                    .(exists("wm_label") ? " (watermark ".wm_label.")" : "") \
            at graph 0.5, 0.5 center
    }
    if (def_max > 0) { set key } else { unset key }
    plot data_bins using 1:3 with boxes lc rgb c_purple \
        title (def_max > 0 ? total_label("n_defer", "watermark deferrals") : "")
    unset label 1

    # 3. queues
    set key
    set ylabel "requests"
    set yrange [0:*]
    ymax_v = queue_max
    @si_ytics
    set format x "%g"
    set xlabel "simulated time (s)"
    if (nrows > 0) {
        plot data using 1:(thinned ? $14 : NaN):15 with filledcurves fc rgb c_orange \
                fs transparent solid 0.25 noborder notitle, \
             data using 1:(thinned ? $11 : NaN):12 with filledcurves fc rgb c_sky \
                fs transparent solid 0.35 noborder notitle, \
             data using 1:16 with lines lw 1.4 lc rgb c_orange \
                title (thinned ? "waiting (mean; band: min - max)" : "waiting"), \
             data using 1:13 with lines lw 1.4 lc rgb c_blue \
                title (thinned ? "running (mean; band: min - max)" : "running")
    } else {
        set yrange [0:1]
        set ytics 1
        unset key
        plot NaN notitle
    }
    unset multiplot
    set output
}
