# pressure.gp: scheduler pressure over time from timeseries.csv, three panels sharing the
# time axis:
#   1. preemptions per interval (a running request lost its blocks and went back to wait)
#   2. watermark deferrals per interval (a waiting request was held back because admitting
#      it would leave fewer than W free blocks)
#   3. running and waiting queue lengths
# The CSV's preemptions and watermark_deferrals columns are cumulative; each row's increase
# over the previous row is summed into fixed time bins (smooth frequency), so the bars are
# exact whatever --sample-every was.
#
# Variables (kvsim passes them; each is optional):
#   title_info   "trace, model, block size" for the title
#   t_end        simulated seconds (summary.json sim_time_s); picks the bin width
#   bin_s        bin width in seconds (default: a 1-2-5 value giving about 100 bins)
#   n_preempt, n_defer   totals from summary.json, for the panel labels
#   nrows, every_n       as in blocks.gp
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "pressure"
file = dir.'/timeseries.csv'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) nrows = 1
if (!exists("every_n")) every_n = 1
if (!exists("t_end") && nrows > 0) {
    stats file skip 1 using 1 nooutput
    t_end = STATS_max
}
if (!exists("t_end")) t_end = 1
# A 1-2-5 bin width giving about 100 bins.
nice(x) = (m = x / 10**floor(log10(x)), \
           10**floor(log10(x)) * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10))
if (!exists("bin_s")) bin_s = (t_end > 0 ? nice(t_end / 100.0) : 1)
bin(t) = bin_s * (floor(t / bin_s) + 0.5)
bin_label = (bin_s >= 1 ? sprintf("%g s", bin_s) : sprintf("%g ms", bin_s * 1000))
total_label(n, what) = exists(n) ? sprintf("%s %s in total", commas(value(n)), what) : what

# Per-bin counts, computed once into datablocks $PRE and $DEF (x = bin centre, y = count);
# their maxima pick integer tic steps.
nice_int(x) = (x <= 5 ? 1 : nice(x / 5.0))
pre_max = 0
def_max = 0
$PRE << EOD
0 0
EOD
$DEF << EOD
0 0
EOD
if (nrows > 0) {
    set yrange [-1:1e30]  # a fixed range: all-zero bins are not an "empty range"
    set table $PRE
    plot p0 = 0, file skip 1 using (bin($1)):(d = $12 - p0, p0 = $12, d) smooth frequency
    set table $DEF
    plot p1 = 0, file skip 1 using (bin($1)):(d = $16 - p1, p1 = $16, d) smooth frequency
    unset table
    set datafile separator whitespace  # tables are written space-separated
    stats $PRE using 2 nooutput
    pre_max = STATS_max
    stats $DEF using 2 nooutput
    def_max = STATS_max
    set datafile separator comma
}

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot layout 3, 1 title "Scheduler pressure over time\n".title_info font ",14" \
        margins 0.085, 0.975, 0.09, 0.87 spacing 0, 0.045
    set xrange [0:t_end]
    set boxwidth bin_s * 0.85 absolute
    set style fill solid 0.85 noborder
    set format x ""
    unset xlabel
    set key top right opaque box lc rgb "#bbbbbb" samplen 2

    # 1. preemptions per bin
    set ylabel sprintf("preemptions\nper %s", bin_label)
    set yrange [0:(pre_max > 0 ? pre_max * 1.4 : 1)]
    set ytics nice_int(pre_max)
    if (nrows == 0) {
        set label 1 "no steps were simulated: timeseries.csv has no rows" at graph 0.5, 0.5 center
    } else {
        if (pre_max == 0) { set label 1 "no preemptions in this run" at graph 0.5, 0.5 center }
    }
    set datafile separator whitespace
    if (pre_max > 0) { set key } else { unset key }
    plot $PRE using 1:2 with boxes lc rgb c_red title (pre_max > 0 ? total_label("n_preempt", "preemptions") : "")
    unset label 1

    # 2. watermark deferrals per bin
    set ylabel sprintf("deferrals\nper %s", bin_label)
    set yrange [0:(def_max > 0 ? def_max * 1.4 : 1)]
    set ytics nice_int(def_max)
    if (nrows > 0 && def_max == 0) {
        set label 1 "no watermark deferrals in this run".(exists("wm_label") ? " (watermark ".wm_label.")" : "") \
            at graph 0.5, 0.5 center
    }
    if (def_max > 0) { set key } else { unset key }
    plot $DEF using 1:2 with boxes lc rgb c_purple title (def_max > 0 ? total_label("n_defer", "watermark deferrals") : "")
    unset label 1

    # 3. queues
    set datafile separator comma
    set key
    set ylabel "requests"
    set yrange [0:*]
    set ytics autofreq
    set format x "%g"
    set xlabel "simulated time (s)"
    if (nrows > 0) {
        plot file skip 1 every every_n using 1:4 with lines lw 1.4 lc rgb c_orange \
                title "waiting", \
             "" skip 1 every every_n using 1:3 with lines lw 1.4 lc rgb c_blue \
                title "running"
    } else {
        plot NaN notitle
    }
    unset multiplot
    set output
}
