# blocks.gp: blocks over time from timeseries.csv.
#
# Unique physical blocks (what the pool really holds) against logical block-table entries
# (what the running requests' tables point at; logical > physical when prefixes are
# shared), the cached-free band (free blocks that still hold a hashed prefix and can be
# revived until evicted: physical .. physical + cached_free), and two horizontal lines:
# usable capacity N-1 (block 0 is the null block) and the admission limit N-1-W (a new
# request is admitted only while W blocks stay free).
#
# Variables (kvsim passes them from summary.json; each is optional):
#   title_info   "trace, model, block size" for the title
#   usable       usable blocks N-1
#   wm_blocks    watermark blocks W;  wm_label  the --watermark fraction as given
#   nrows        data rows in timeseries.csv (0: draw an empty chart saying so)
#   every_n      plot every n-th row (kvsim thins long runs to ~4000 points per curve)
#   plots        directory of these scripts, for common.gp
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "blocks"
file = dir.'/timeseries.csv'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) nrows = 1
if (!exists("every_n")) every_n = 1
has_usable = exists("usable")
has_wm = has_usable && exists("wm_blocks") && wm_blocks > 0
if (!exists("wm_label")) wm_label = ""

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set title "KV blocks over time\n".title_info font ",14"
    set xlabel "simulated time (s)"
    set ylabel "blocks"
    set format y "%.0f"
    set key below center horizontal Left reverse samplen 3 spacing 1.1 width 2 height 0.6
    set yrange [0:*]
    set offsets 0, 0, graph 0.04, 0
    set xrange [0:*]
    set autoscale xfixmax
    if (nrows > 0) {
        # The band is drawn first so the lines stay on top; keyentry orders the legend.
        plot file skip 1 every every_n using 1:5:($5 + $7) with filledcurves \
                fc rgb c_green fs transparent solid 0.25 noborder, \
             "" skip 1 every every_n using 1:6 with lines lw 1.6 lc rgb c_orange, \
             "" skip 1 every every_n using 1:5 with lines lw 1.6 lc rgb c_blue, \
             (has_usable ? usable : NaN) with lines lw 2 lc rgb c_red, \
             (has_wm ? usable - wm_blocks : NaN) with lines dt (8, 5) lw 2 lc rgb c_purple, \
             keyentry with lines lw 2 lc rgb c_blue title "unique physical blocks", \
             keyentry with lines lw 2 lc rgb c_orange title "logical block-table entries", \
             keyentry with filledcurves fc rgb c_green fs transparent solid 0.25 noborder \
                title "cached-free: free, prefix still cached", \
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
