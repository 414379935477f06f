# pressure.gp: scheduler pressure over time from timeseries.csv, three panels sharing the
# time axis:
#   1. preemptions per interval (a running request lost its blocks and went back to wait)
#   2. watermark deferrals per interval (a waiting request was held back because admitting
#      it would leave fewer than W free blocks)
#   3. running and waiting queue lengths
# The CSV's preemptions and watermark_deferrals columns are cumulative; their increase is
# summed into fixed time bins, exactly (see $G below), whatever --sample-every was.
#
# Variables (kvsim passes them; each is optional):
#   title_info   "trace, model, block size" for the title
#   t_end        simulated seconds (summary.json sim_time_s); picks the bin width
#   bin_s        bin width in seconds (default: a 1-2-5 value giving about 100 bins)
#   n_preempt, n_defer   totals from summary.json, for the panel labels
#   nrows, every_n       as in blocks.gp (the queue lines are thinned the same way)
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "pressure"
file = dir.'/timeseries.csv'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) { stats file skip 1 using 1 nooutput; nrows = STATS_records }
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

# One pass over the CSV into $G, one line per group of consecutive rows (common.gp's M4
# thinning, except that a group also ends where a time bin does, so each group lies in
# one bin): words 1-2 the group's first and last time, 3-8 running, 9-14 waiting, 15-16
# the cumulative preemptions and deferrals at its last row.  A group's line is written
# when the next group starts (`with table if` sees the row after its last) and the final
# one after the pass.  Per-bin counts then come from $G exactly: the increase of the
# cumulative counters from one group to the next, summed per bin (smooth frequency) into
# $PRE and $DEF, whose maxima pick integer tic steps.
nice_int(x) = (x <= 5 ? 1 : nice(x / 5.0))
pre_max = 0
def_max = 0
$PRE << EOD
0 0
EOD
$DEF << EOD
0 0
EOD
$G << EOD
EOD
$RUN << EOD
EOD
$WAIT << EOD
EOD
group_line(x) = sprintf("%.9f %.9f %.0f %.9f %.0f %.9f %.0f %.0f %.0f %.9f %.0f %.9f %.0f %.0f " \
                        ."%.0f %.0f", tf, tl, rf, rtn, rn, rtx, rx, rl, \
                        wf, wtn, wn, wtx, wx, wl, gp, gd)
if (nrows > 0) {
    gb = -1; gc = 0; tf = 0; tl = 0; gp = 0; gd = 0
    rf = 0; rtn = 0; rn = 0; rtx = 0; rx = 0; rl = 0
    wf = 0; wtn = 0; wn = 0; wtx = 0; wx = 0; wl = 0
    set table $G
    plot file skip 1 using (r = int($0), b = floor($1 / bin_s), \
            f = (r == 0 || b != gb || gc >= every_n), out = (f && r > 0 ? group_line(0) : ""), \
            gb = b, gc = f ? 1 : gc + 1, tf = f ? $1 : tf, tl = $1, \
            rtn = f || $3 < rn ? $1 : rtn, rn = f || $3 < rn ? $3 : rn, \
            rtx = f || $3 > rx ? $1 : rtx, rx = f || $3 > rx ? $3 : rx, \
            rf = f ? $3 : rf, rl = $3, \
            wtn = f || $4 < wn ? $1 : wtn, wn = f || $4 < wn ? $4 : wn, \
            wtx = f || $4 > wx ? $1 : wtx, wx = f || $4 > wx ? $4 : wx, \
            wf = f ? $4 : wf, wl = $4, gp = $12, gd = $16, out) with table if (f && r > 0)
    unset table
    set print $G append
    print group_line(0)
    set print $RUN
    m4_base = 3
    @m4_expand
    set print $WAIT
    m4_base = 9
    @m4_expand
    unset print

    set datafile separator whitespace  # tables are written tab-separated
    set yrange [-1:1e30]  # a fixed range: all-zero bins are not an "empty range"
    set table $PRE
    plot p0 = 0, $G using (bin($1)):(d = $15 - p0, p0 = $15, d) smooth frequency
    set table $DEF
    plot p1 = 0, $G using (bin($1)):(d = $16 - p1, p1 = $16, d) smooth frequency
    unset table
    stats $PRE using 2 nooutput
    pre_max = STATS_max
    stats $DEF using 2 nooutput
    def_max = STATS_max
}
set datafile separator whitespace  # from here on only datablocks are read

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
    if (pre_max > 0) { set key } else { unset key }
    plot $PRE using 1:2 with boxes lc rgb c_red \
        title (pre_max > 0 ? total_label("n_preempt", "preemptions") : "")
    unset label 1

    # 2. watermark deferrals per bin
    set ylabel sprintf("deferrals\nper %s", bin_label)
    set yrange [0:(def_max > 0 ? def_max * 1.4 : 1)]
    set ytics nice_int(def_max)
    if (nrows > 0 && def_max == 0) {
        set label 1 "no watermark deferrals in this run" \
                    .(exists("wm_label") ? " (watermark ".wm_label.")" : "") \
            at graph 0.5, 0.5 center
    }
    if (def_max > 0) { set key } else { unset key }
    plot $DEF using 1:2 with boxes lc rgb c_purple \
        title (def_max > 0 ? total_label("n_defer", "watermark deferrals") : "")
    unset label 1

    # 3. queues
    set key
    set ylabel "requests"
    set yrange [0:*]
    set ytics autofreq
    set format x "%g"
    set xlabel "simulated time (s)"
    if (nrows > 0) {
        plot $WAIT using 1:2 with lines lw 1.4 lc rgb c_orange title "waiting", \
             $RUN using 1:2 with lines lw 1.4 lc rgb c_blue title "running"
    } else {
        set yrange [0:1]
        set ytics 1
        unset key
        plot NaN notitle
    }
    unset multiplot
    set output
}
