# cluster_blocks.gp: unique physical blocks over time, per replica, from a cluster run's
# timeseries.csv (one row per step of any replica), with the per-replica usable capacity
# N-1 as a line.
#
# Up to 16 replicas: one line each, from the data file kvsim reduces timeseries.csv to
# (src/plot_series.c: per pixel column the time, the lowest and the highest physical
# blocks of any replica, then each replica's time-weighted mean), the lowest-highest
# range as a band under the lines so every peak shows.  Beyond 16 kvsim passes quantile
# bands over the replicas instead (each replica's latest sample carried forward, binned in
# time): the min-max range, the P10-P90 range and the median.
#
# Variables (kvsim passes them from summary.json; each is optional):
#   title_info   "trace, model, block size, replicas" for the title
#   nrep         replicas;  usable  usable blocks per replica N-1
#   nrows        data rows in timeseries.csv;  data  the per-replica data file (up to 16)
#   band_t, band_lo, band_p10, band_p50, band_p90, band_hi   the bands (more than 16)
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "cluster_blocks"
file = dir.'/timeseries.csv'
if (!exists("title_info")) title_info = dir
if (!exists("nrep")) nrep = 1
if (!exists("nrows")) { stats file skip 1 using 1 nooutput; nrows = STATS_records }
has_usable = exists("usable")
bands = exists("band_t")
nb = bands ? words(band_t) : 0
bw(s, i) = real(word(s, int(i)))  # sample variables are reals
if (!exists("data")) data = ""

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set title sprintf("Physical KV blocks per replica (%d replicas)\n", nrep).title_info \
        font ",14"
    set xlabel "simulated time (s)"
    set ylabel "unique physical blocks"
    set format y "%.0f"
    set yrange [0:*]
    set offsets 0, 0, graph 0.04, 0
    set xrange [0:*]
    set autoscale xfixmax
    set key below center horizontal Left reverse samplen 2 spacing 1.1 width 1 maxrows 3
    if (nrows == 0) {
        set label 1 "no steps were simulated: timeseries.csv has no rows" at graph 0.5, 0.5 center
        set xrange [0:1]
        plot (has_usable ? usable : NaN) with lines lw 2 lc rgb c_red title "usable per replica"
        unset label 1
    } else { if (bands) {
        plot sample [i=1:nb:1] '+' using (bw(band_t, i)):(bw(band_lo, i)):(bw(band_hi, i)) \
                with filledcurves fc rgb c_sky fs transparent solid 0.25 noborder \
                title "min - max over replicas", \
             [i=1:nb:1] '+' using (bw(band_t, i)):(bw(band_p10, i)):(bw(band_p90, i)) \
                with filledcurves fc rgb c_blue fs transparent solid 0.35 noborder \
                title "P10 - P90", \
             [i=1:nb:1] '+' using (bw(band_t, i)):(bw(band_p50, i)) \
                with lines lw 2 lc rgb c_blue title "median replica", \
             (has_usable ? usable : NaN) with lines lw 2 lc rgb c_red \
                title (has_usable ? sprintf("usable per replica N-1 = %s", commas(usable)) : "")
    } else {
        set datafile separator whitespace
        plot data using 1:2:3 with filledcurves fc rgb c_sky fs transparent solid 0.3 \
                noborder title "min - max of any replica (per pixel column)", \
             for [r = 0:nrep - 1] data using 1:(column(4 + r)) \
                with lines lw 1.4 lc rgb group_color(r) title sprintf("replica %d", r), \
             (has_usable ? usable : NaN) with lines lw 2 dt (8, 5) lc rgb c_red \
                title (has_usable ? sprintf("usable per replica N-1 = %s", commas(usable)) : "")
    } }
    set output
}
