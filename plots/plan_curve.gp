# plan_curve.gp: the capacity plan from plan.csv: each SLO metric against load, with the
# SLO threshold (plan.json "slo") as a dashed line, every load coloured by whether it met
# all SLOs, and the answer (the highest load meeting every SLO) as a vertical line.
# Three panels: P99 TTFT (log y), P99 TPOT, preemption rate.
#
# Variables (kvsim reads them from plan.json / plan.csv; all optional):
#   slo_ttft_p99_s, slo_tpot_p99_s, slo_preemption_rate   thresholds
#   answer_load       the highest load with meets_slo true (absent: none met the SLOs)
#   answer_rate       its arrival rate (req/s)
#   xcol              the x column: "load" (default), or "replicas" for a replica plan,
#                     whose answer is answer_replicas (answer_gpus GPUs)
#   title_info        for the title
if (!exists("plots")) plots = "plots"
if (!exists("dir")) dir = "."
ngroups = 1
load plots.'/sweep_common.gp'
file = dir.'/plan.csv'
name = "plan_curve"

ok_row(x) = (strcol("meets_slo") eq "true" || strcol("meets_slo") eq "1")
only_ok(y) = ok_row(0) ? y : NaN
only_bad(y) = ok_row(0) ? NaN : y
has(v) = exists(v)
metric(k) = k == 1 ? column("ttft_p99_s") : k == 2 ? column("tpot_p99_s") * 1000 : \
            column("preemption_rate") * 100
slo(k) = k == 1 ? (has("slo_ttft_p99_s") ? slo_ttft_p99_s : NaN) : \
         k == 2 ? (has("slo_tpot_p99_s") ? slo_tpot_p99_s * 1000 : NaN) : \
                  (has("slo_preemption_rate") ? slo_preemption_rate * 100 : NaN)
slo_text(k) = slo(k) == slo(k) ? \
    (k == 1 ? sprintf("SLO %g s", slo(k)) : k == 2 ? sprintf("SLO %g ms", slo(k)) \
                                                   : sprintf("SLO %g%%", slo(k))) : ""
panel_title(k) = word("'P99 time to first token' 'P99 time per output token' \
                       'preemption rate'", k)
panel_ylabel(k) = word("'TTFT P99 (s, log scale)' 'TPOT P99 (ms)' \
                        'preemptions per request (%)'", k)
if (!exists("xcol")) xcol = "load"
by_replicas = xcol eq "replicas"
answer_text = by_replicas ? (has("answer_replicas") ? \
    sprintf("answer: %d replicas (%d GPUs) meet every SLO", answer_replicas, answer_gpus) : \
    "no replica count meets every SLO") : has("answer_load") ? \
    sprintf("answer: load %g×%s meets every SLO", answer_load, \
            has("answer_rate") ? sprintf(" (%.3g req/s)", answer_rate) : "") : \
    "no load meets every SLO"
answer_x = by_replicas ? (has("answer_replicas") ? answer_replicas : NaN) : \
           (has("answer_load") ? answer_load : NaN)

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot title "Capacity plan: SLO metrics against ".(by_replicas ? "replicas" : "load") \
        ."\n".title_info."\n".answer_text font ",14"
    grid_rows = 1; grid_cols = 3; gap_x = 0.085; grid_top = 0.80; grid_bottom = 0.2
    set offsets graph 0.05, graph 0.05, graph 0.1, graph 0.06
    set xlabel (by_replicas ? "replicas" : "load (multiple of the trace arrival rate)")
    set format x "%g"
    unset key
    do for [k = 1:3] {
        pr = 0; pc = k - 1
        @panel
        set title panel_title(k) font ",12"
        set ylabel panel_ylabel(k)
        unset arrow
        unset label
        set autoscale xfix
        if (slo(k) == slo(k)) {
            set label 1 slo_text(k) at graph 0.02, first slo(k) left offset 0, 0.7 tc rgb c_red
        }
        if (k == 1) {
            set logscale y 10
            set autoscale y
        } else {
            unset logscale y
            set yrange [0:*]
        }
        set format y "%g"
        if (answer_x == answer_x) {
            set arrow from answer_x, graph 0 to answer_x, graph 1 nohead lw 2 \
                dt (4, 3) lc rgb c_green back
        }
        # The threshold as a function, so that y autoscaling includes it.
        plot file using xcol:(metric(k)) with lines lw 2 lc rgb c_grey, \
             (slo(k)) with lines dt (8, 5) lw 2 lc rgb c_red, \
             file using xcol:(only_ok(metric(k))) with points pt 7 ps 1.6 lc rgb c_green, \
             file using xcol:(only_bad(metric(k))) with points pt 9 ps 1.8 lc rgb c_red
    }
    # Legend strip
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.005; set tmargin at screen 0.075
    unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid
    unset logscale; unset arrow; unset label; unset offsets
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal samplen 2.5 width 2 Left reverse maxrows 1
    plot NaN with points pt 7 ps 1.6 lc rgb c_green title "meets every SLO", \
         NaN with points pt 9 ps 1.8 lc rgb c_red title "misses an SLO", \
         NaN with lines dt (8, 5) lw 2 lc rgb c_red title "SLO threshold", \
         NaN with lines dt (4, 3) lw 2 lc rgb c_green \
            title (answer_x == answer_x ? (by_replicas ? "fewest replicas meeting every SLO" \
                                                         : "highest load meeting every SLO") : "")
    @house_style
    unset multiplot
    set output
}
