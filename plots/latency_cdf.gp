# latency_cdf.gp: cumulative distributions of TTFT and TPOT over the finished requests of
# requests.csv (status "finished"; empty cells mean undefined, e.g. the TPOT of a
# one-token output), on log-x panels side by side, with P50/P95/P99 marked.
#
# The percentiles marked are summary.json's (the same interpolation the human summary
# prints), passed as ttft_p50, ttft_p95, ttft_p99, tpot_p50, tpot_p95, tpot_p99; when they
# are absent the points are left out.  n_finished / n_total label the title; n_finished = 0
# draws empty panels that say so instead of failing.  col_shift: see below.
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "latency_cdf"
file = dir.'/requests.csv'
if (!exists("title_info")) title_info = dir
if (!exists("n_finished")) n_finished = 1
count_info = exists("n_total") ? \
    sprintf(": %s of %s requests finished", commas(n_finished), commas(n_total)) : ""

# Seconds as a short human string: 12.3 ms, 1.85 s, 305 s.
human_s(x) = x < 1 ? sprintf("%.3g ms", x * 1000) : sprintf("%.3g s", x)
has(v) = exists(v) ? value(v) > 0 : 0
pct_title(v, p) = has(v) ? sprintf("P%d  %s", p, human_s(value(v))) : ""
pct_x(v) = has(v) ? value(v) : NaN

# A cluster run's requests.csv has two more columns before ttft_s (replica,
# predicted_hit_tokens): kvsim passes col_shift = 2 then.
if (!exists("col_shift")) col_shift = 0
# The value plotted from column col of a row: finished rows with a positive value only.
sample(col) = (strcol(13 + col_shift) eq "finished" && column(col + col_shift) > 0 \
               ? column(col + col_shift) : NaN)
# How many rows each panel has (0 when every TPOT is undefined, say): stats on the file.
# The CDFs are computed once into $TTFT and $TPOT and thinned to at most ~2000 steps per
# curve (a 19,000-request run would otherwise give a megabyte of SVG path).
array n_val[2]
array lo[2]
array hi[2]
$TTFT << EOD
EOD
$TPOT << EOD
EOD
do for [k = 1:2] {
    n_val[k] = 0
    if (n_finished > 0) {
        undefine STATS_*
        stats file skip 1 using (sample(9 + k)) nooutput
        if (exists("STATS_records")) {
            n_val[k] = STATS_records; lo[k] = STATS_min; hi[k] = STATS_max
        }
    }
}
set table $TTFT
if (n_val[1] > 0) { plot file skip 1 using (sample(10)):(1) smooth cnormal }
set table $TPOT
if (n_val[2] > 0) { plot file skip 1 using (sample(11)):(1) smooth cnormal }
unset table
# The top 2% (the tail the percentiles are about) is always drawn in full; the two pieces
# overlap so the curve stays joined.  Small runs are drawn whole.
thin(k) = (n_val[k] > 2000 ? int(n_val[k] / 2000) : 1)
body(y) = (th == 1 || y < 0.98 ? y : NaN)
tail(y) = (y >= 0.97 ? y : NaN)
# Log x tics: decades, or when the data spans under 3.5 decades more labelled values per decade
# (log_tics is then "1 2 5" or "1 1.5 2 3 5 7").
log_tics = "set xtics (); do for [e = -6:6] { do for [m in mantissas] { \
                set xtics add (sprintf('%g', real(m) * 10.0**e) real(m) * 10.0**e) } }"

panel_title(prefix) = prefix eq "ttft" ? "time to first token (TTFT)" \
                                        : "time per output token (TPOT)"

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot layout 1, 2 title "Latency CDFs".count_info."\n".title_info font ",14" \
        margins 0.07, 0.98, 0.12, 0.85 spacing 0.07, 0
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
        set xlabel (k == 1 ? "TTFT (s, log scale)" : "TPOT (s per token, log scale)")
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
            if (span < 3.5) {
                mantissas = (span < 0.5 ? "1 1.2 1.5 2 2.5 3 4 5 6 7 8 9" : \
                             span < 1.2 ? "1 1.5 2 3 5 7" : "1 2 5")
                @log_tics
            }
            set datafile separator whitespace  # tables are written space-separated
            th = thin(k)
            cdf = (k == 1 ? "$TTFT" : "$TPOT")
            cdf_color = (k == 1 ? c_blue : c_orange)
            # The first step, from 0 at the smallest value (the table starts at 1/n).
            set arrow from lo[k], 0 to lo[k], first 1.0 / n_val[k] nohead lw 2 \
                lc rgb cdf_color front
            if (has(prefix."_p50")) {
                plot cdf using 1:(body($2)) every th with steps lw 2 lc rgb cdf_color notitle, \
                     cdf using 1:(tail($2)) with steps lw 2 lc rgb cdf_color notitle, \
                     "+" using (pct_x(prefix."_p50")):(0.50) every ::0::0 with points pt 7 \
                        ps 1.6 lc rgb c_green title pct_title(prefix."_p50", 50), \
                     "+" using (pct_x(prefix."_p95")):(0.95) every ::0::0 with points pt 5 \
                        ps 1.5 lc rgb c_purple title pct_title(prefix."_p95", 95), \
                     "+" using (pct_x(prefix."_p99")):(0.99) every ::0::0 with points pt 9 \
                        ps 2 lc rgb c_red title pct_title(prefix."_p99", 99)
            } else {
                plot cdf using 1:(body($2)) every th with steps lw 2 lc rgb cdf_color notitle, \
                     cdf using 1:(tail($2)) with steps lw 2 lc rgb cdf_color notitle
            }
            set datafile separator comma
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
