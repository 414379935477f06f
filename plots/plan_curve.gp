# plan_curve.gp: the capacity plan from plan.csv: each SLO metric against the arrival
# rate (requests/s, with the load multiple of the trace's rate on the top axis), with the
# SLO threshold (plan.json "slo") as a dashed line, every load coloured by whether it met
# all SLOs, and the answer (the highest load meeting every SLO) as a vertical line.
# Three panels: P99 TTFT (log y), P99 TPOT, preemption rate; each y range fits the data
# and the threshold (no empty decades).
#
# Variables (kvsim reads them from plan.json / plan.csv; all optional):
#   slo_ttft_p99_s, slo_tpot_p99_s, slo_preemption_rate   thresholds
#   answer_load       the highest load with meets_slo true (absent: none met the SLOs)
#   answer_rate       its arrival rate (req/s)
#   xcol              the x column: "arrival_rate_req_s" (kvsim's choice when every row
#                     has a rate; base_rate = requests/s per unit of load links the top
#                     axis), "load" (the default), "replicas" for a replica plan (answer
#                     answer_replicas, answer_gpus GPUs), "num_blocks" or
#                     "kv_budget_bytes" for a pool plan (answer answer_pool)
#   title_info        for the title: trace, model, GPU, TP/PP, KV dtype, block size
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
by_rate = xcol eq "arrival_rate_req_s" && exists("base_rate")
by_pool = xcol eq "num_blocks" || xcol eq "kv_budget_bytes"
gib = 1024.0 * 1024 * 1024
xval(x) = xcol eq "kv_budget_bytes" ? x / gib : x
x_of(d) = xval(column(xcol))
answer_text = by_replicas ? (has("answer_replicas") ? \
    sprintf("answer: %d replicas (%d GPUs) meet every SLO", answer_replicas, answer_gpus) : \
    "no replica count meets every SLO") : by_pool ? (has("answer_pool") ? \
    (xcol eq "num_blocks" ? sprintf("answer: %s blocks meet every SLO", commas(answer_pool)) \
                          : sprintf("answer: %.3g GiB of KV meets every SLO", answer_pool / gib)) \
    : "no pool size meets every SLO") : has("answer_load") ? \
    (has("answer_rate") ? sprintf("answer: %.4g req/s (load %g×) meets every SLO", \
                                  answer_rate, answer_load) \
                        : sprintf("answer: load %g× meets every SLO", answer_load)) : \
    "no load meets every SLO"
answer_x = by_replicas ? (has("answer_replicas") ? answer_replicas : NaN) : \
           by_pool ? (has("answer_pool") ? xval(answer_pool) : NaN) : \
           by_rate ? (has("answer_rate") ? answer_rate : NaN) : \
           (has("answer_load") ? answer_load : NaN)
x_label = by_replicas ? "replicas" : xcol eq "num_blocks" ? "KV blocks in the pool" : \
          xcol eq "kv_budget_bytes" ? "KV budget (GiB)" : \
          by_rate ? "arrival rate (requests/s)" : "load (multiple of the trace arrival rate)"
what_x = by_replicas ? "replicas" : by_pool ? "pool size" : "load"

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot title "Capacity plan: SLO metrics against ".what_x \
        ."\n".title_info."\n".answer_text font ",14"
    grid_rows = 1; grid_cols = 3; gap_x = 0.085; grid_top = (by_rate ? 0.74 : 0.80)
    grid_bottom = 0.2
    set offsets graph 0.05, graph 0.05, graph 0.1, graph 0.06
    set xlabel x_label
    set format x "%g"
    if (by_rate) {
        # The load multiple on top: the same points, x / base_rate.
        set link x2 via x / base_rate inverse x * base_rate
        stats file using (column("load")) nooutput
        set x2tics nice125(STATS_max / 5.0) nomirror out scale 0.6
        set format x2 "%g×"
        set x2label "load (multiple of the trace arrival rate)" offset 0, -0.4
    }
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
        # y from the data and the threshold: log TTFT exactly from the smallest to the
        # largest (the offsets pad), linear panels from 0 to the largest.
        if (k == 1) {
            set logscale y 10
            set autoscale yfix
            # Under 2.5 decades: 1-2-5 tics, so the axis has labels inside the data.
            stats file using (column("ttft_p99_s")) nooutput
            if (STATS_min > 0 && log10(STATS_max / STATS_min) < 2.5) {
                set ytics ()
                do for [e = -4:4] { do for [m in "1 2 5"] {
                    set ytics add (sprintf("%g", real(m) * 10.0**e) real(m) * 10.0**e) } }
            } else {
                set ytics autofreq
            }
            set mytics 10
        } else {
            unset logscale y
            set ytics autofreq
            set mytics default
            set yrange [0:*]
            set autoscale yfixmax
        }
        set format y "%g"
        if (answer_x == answer_x) {
            set arrow from answer_x, graph 0 to answer_x, graph 1 nohead lw 2 \
                dt (4, 3) lc rgb c_green back
        }
        # The threshold as a function, so that y autoscaling includes it.
        plot file using (x_of(0)):(metric(k)) with lines lw 2 lc rgb c_grey, \
             (slo(k)) with lines dt (8, 5) lw 2 lc rgb c_red, \
             file using (x_of(0)):(only_ok(metric(k))) with points pt 7 ps 1.6 lc rgb c_green, \
             file using (x_of(0)):(only_bad(metric(k))) with points pt 9 ps 1.8 lc rgb c_red
    }
    # Legend strip
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.005; set tmargin at screen 0.075
    unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid
    unset x2tics; unset x2label; unset link x2
    unset logscale; unset arrow; unset label; unset offsets
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal samplen 2.5 width 2 Left reverse maxrows 1
    plot NaN with points pt 7 ps 1.6 lc rgb c_green title "meets every SLO", \
         NaN with points pt 9 ps 1.8 lc rgb c_red title "misses an SLO", \
         NaN with lines dt (8, 5) lw 2 lc rgb c_red title "SLO threshold", \
         NaN with lines dt (4, 3) lw 2 lc rgb c_green \
            title (answer_x == answer_x ? (by_replicas ? "fewest replicas meeting every SLO" \
                                           : by_pool ? "smallest pool meeting every SLO" \
                                                     : "highest load meeting every SLO") : "")
    @house_style
    unset multiplot
    set output
}
