# latency_cdf.gp: cumulative distributions of TTFT and TPOT over the finished requests,
# on log-x panels side by side, with P50/P95/P99 marked.
#
# kvsim reads requests.csv once (src/plot_series.c) and writes each CDF as "x F" points
# (the finished requests' positive values, sorted; a one-token output has no TPOT),
# thinned to what a log-x plot can show: a point moves the curve by at least 1/2000 of
# its decades or of its height, and the first and the last (the maximum) are kept.
#
# Variables (kvsim passes them):
#   data_ttft, data_tpot   the CDF data files
#   n_ttft, n_tpot         values in each (0 draws an empty panel saying why)
#   lo_ttft, hi_ttft, lo_tpot, hi_tpot   their smallest and largest values
#   ttft_p50, ttft_p95, ttft_p99, tpot_p50, tpot_p95, tpot_p99   summary.json's
#                          percentiles (the same interpolation the human summary prints),
#                          marked and printed in human units (ms, s, min, h)
#   n_finished, n_total    for the title;  title_info  the run's title
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "latency_cdf"
if (!exists("title_info")) title_info = dir
if (!exists("n_finished")) n_finished = 1
count_info = exists("n_total") ? \
    sprintf(": %s of %s requests finished", commas(n_finished), commas(n_total)) : ""
has(v) = exists(v) ? value(v) > 0 : 0
pct_title(v, p) = has(v) ? sprintf("P%d  %s", p, human_s(value(v))) : ""
pct_x(v) = has(v) ? value(v) : NaN
array n_val[2]
array lo[2]
array hi[2]
do for [k = 1:2] {
    p_ = (k == 1 ? "ttft" : "tpot")
    n_val[k] = exists("n_".p_) ? value("n_".p_) : 0
    lo[k] = exists("lo_".p_) ? value("lo_".p_) : 1
    hi[k] = exists("hi_".p_) ? value("hi_".p_) : 1
}
set datafile separator whitespace
# Log x tics: decades, or when the data spans under 3.5 decades more labelled values per
# decade (mantissas "1 3", "1 2 5", "1 2 3 5", ...: as many as fit), in human units.
tic_s(x) = x < 1 ? sprintf("%g ms", x * 1000) : x < 1000 ? sprintf("%g s", x) : \
           sprintf("%gk s", x / 1000)
log_tics = "set xtics (); do for [e = -6:6] { do for [m in mantissas] { \
                set xtics add (tic_s(real(m) * 10.0**e) real(m) * 10.0**e) } }"

panel_title(prefix) = prefix eq "ttft" ? "time to first token (TTFT)" \
                                        : "time per output token (TPOT)"

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot layout 1, 2 title "Latency CDFs".count_info."\n".title_info font ",14" \
        margins 0.07, 0.98, 0.12, 0.85 - top_shift spacing 0.07, 0
    set logscale x 10
    set format x "%g"
    set yrange [0:1.0]
    set ytics 0.1
    set mytics 2
    set grid xtics mxtics ytics
    do for [k = 1:2] {
        set key bottom right opaque box lc rgb "#bbbbbb" samplen 1.5 spacing 1.2 Left reverse
        prefix = (k == 1 ? "ttft" : "tpot")
        unset xtics  # drop the previous panel's explicit tic list
        set xtics nomirror out scale 0.6
        set title panel_title(prefix) font ",13"
        set xlabel (k == 1 ? "TTFT (log scale)" : "TPOT (per output token, log scale)")
        set ylabel (k == 1 ? "fraction of finished requests" : "")
        unset arrow
        # Drop lines from each marked percentile to the x axis.
        do for [p in "50 95 99"] {
            v = prefix."_p".p
            if (has(v)) {
                set arrow from value(v), graph 0 to value(v), first p / 100.0 nohead \
                    dt (6, 4) lc rgb c_grey lw 1 back
            }
        }
        if (n_val[k] > 0) {
            set xrange [lo[k] / 1.25 : hi[k] * 1.25]
            span = log10(hi[k] / lo[k])
            mantissas = (span < 0.5 ? "1 1.2 1.5 2 2.5 3 4 5 6 7 8 9" : \
                         span < 1.2 ? "1 2 3 5" : span < 2.2 ? "1 2 5" : \
                         span < 3.5 ? "1 3" : "1")
            @log_tics
            cdf = (k == 1 ? data_ttft : data_tpot)
            cdf_color = (k == 1 ? c_blue : c_orange)
            # The first step, from 0 at the smallest value (the table starts at 1/n).
            set arrow from lo[k], 0 to lo[k], first 1.0 / n_val[k] nohead lw 2 \
                lc rgb cdf_color front
            if (has(prefix."_p50")) {
                plot cdf using 1:2 with steps lw 2 lc rgb cdf_color notitle, \
                     "+" using (pct_x(prefix."_p50")):(0.50) every ::0::0 with points pt 7 \
                        ps 1.6 lc rgb c_green title pct_title(prefix."_p50", 50), \
                     "+" using (pct_x(prefix."_p95")):(0.95) every ::0::0 with points pt 5 \
                        ps 1.5 lc rgb c_purple title pct_title(prefix."_p95", 95), \
                     "+" using (pct_x(prefix."_p99")):(0.99) every ::0::0 with points pt 9 \
                        ps 2 lc rgb c_red title pct_title(prefix."_p99", 99)
            } else {
                plot cdf using 1:2 with steps lw 2 lc rgb cdf_color notitle
            }
        } else {
            set xrange [0.001:1000]
            unset key
            empty_text = n_finished == 0 ? "no finished requests:\nno latency to plot" : \
                         k == 1 ? "no request has a TTFT" \
                                : "no request has a TPOT (all outputs are one token)"
            set label 1 empty_text at graph 0.5, 0.5 center
            plot NaN notitle
            unset label 1
        }
    }
    unset multiplot
    set output
}
