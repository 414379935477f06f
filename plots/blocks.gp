# blocks.gp: blocks over time, from the series data file kvsim reduces timeseries.csv to.
#
# Unique physical blocks (what the pool really holds) against logical block-table entries
# (what the running requests' tables point at; logical > physical when prefixes are
# shared), the cached-free band (free blocks that still hold a hashed prefix and can be
# revived until evicted: physical .. physical + cached_free), and two horizontal lines:
# usable capacity N-1 (block 0 is the null block) and the admission limit N-1-W (a new
# request is admitted only while W blocks stay free).
#
# The data (src/plot_series.c): one line per pixel column of equal simulated time (or per
# row, for a short run): column 1 the time, then min, max and time-weighted mean of
# physical (2-4), logical (5-7), cached-free (8-10), running (11-13), waiting (14-16).  A
# long run draws each block series as its min-max band (every peak kept) under its mean
# line; a short one draws the rows as they are.
#
# Variables (kvsim passes them; gnuplot -e "data='…'" runs it by hand on such a file):
#   data         the series data file;  nrows  rows of timeseries.csv (0: an empty chart)
#   thinned      1 when the data is per pixel column (then the bands are drawn)
#   title_info   "trace · model on GPU · TP/PP · KV dtype · block size · …" for the title
#   usable       usable blocks N-1;  wm_blocks  watermark blocks W;  wm_label  the fraction
#   show_cached  1 to draw the cached-free band (kvsim: some request's first admission hit)
#   shared       1 when logical differs from physical somewhere (else one line is drawn)
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "blocks"
if (!exists("data")) data = dir.'/series.dat'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) nrows = 1
if (!exists("thinned")) thinned = 0
if (!exists("show_cached")) show_cached = 1
if (!exists("shared")) shared = 1
has_usable = exists("usable")
has_wm = has_usable && exists("wm_blocks") && wm_blocks > 0
if (!exists("wm_label")) wm_label = ""
set datafile separator whitespace

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set title "KV blocks over time\n".title_info font ",14"
    set xlabel "simulated time (s)"
    set ylabel "blocks"
    if (has_usable) { ymax_v = usable } else { ymax_v = 0 }
    @si_ytics
    set key below center horizontal Left reverse samplen 3 spacing 1.1 width 2 height 0.6
    set yrange [0:*]
    set offsets 0, 0, graph 0.04, 0
    set xrange [0:*]
    set autoscale xfixmax
    if (nrows > 0) {
        # Bands first (cached-free on top of the physical mean, then the physical range),
        # then logical under physical; keyentry orders the legend.
        plot data using 1:4:(show_cached ? $4 + $10 : NaN) with filledcurves fc rgb c_green \
                fs transparent solid 0.25 noborder, \
             data using 1:(thinned ? $2 : NaN):3 with filledcurves fc rgb c_sky \
                fs transparent solid 0.35 noborder, \
             data using 1:(shared ? $7 : NaN) with lines lw 1.6 lc rgb c_orange, \
             data using 1:4 with lines lw 1.6 lc rgb c_blue, \
             (has_usable ? usable : NaN) with lines lw 2 lc rgb c_red, \
             (has_wm ? usable - wm_blocks : NaN) with lines dt (8, 5) lw 2 lc rgb c_purple, \
             keyentry with lines lw 2 lc rgb c_blue \
                title (thinned ? "unique physical blocks (mean per pixel column)" \
                               : "unique physical blocks"), \
             keyentry with filledcurves fc rgb c_sky fs transparent solid 0.35 noborder \
                title (thinned ? "physical: min - max per pixel column" : ""), \
             keyentry with lines lw 2 lc rgb c_orange \
                title (shared ? "logical block-table entries" \
                              : "logical = physical (no block shared)"), \
             keyentry with filledcurves fc rgb c_green fs transparent solid 0.25 noborder \
                title (show_cached ? "cached-free: free, prefix still cached" : ""), \
             keyentry with lines lw 2 lc rgb c_red \
                title (has_usable ? sprintf("usable capacity N-1 = %s", commas(usable)) : ""), \
             keyentry with lines dt (8, 5) lw 2 lc rgb c_purple \
                title (has_wm ? sprintf("admission limit N-1-W = %s (W = %s)", \
                                        commas(usable - wm_blocks), commas(wm_blocks)) : "")
    } else {
        set label 1 "no steps were simulated: timeseries.csv has no rows" at graph 0.5, 0.5 center
        set xrange [0:1]
        plot (has_usable ? usable : NaN) with lines lw 2 lc rgb c_red title "usable capacity"
        unset label 1
    }
    set output
}
