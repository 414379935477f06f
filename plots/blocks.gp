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
#   every_n      rows per group when thinning long runs (see common.gp)
#   plots        directory of these scripts, for common.gp
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "blocks"
file = dir.'/timeseries.csv'
if (!exists("title_info")) title_info = dir
if (!exists("nrows")) { stats file skip 1 using 1 nooutput; nrows = STATS_records }
has_usable = exists("usable")
has_wm = has_usable && exists("wm_blocks") && wm_blocks > 0
if (!exists("wm_label")) wm_label = ""

# One pass over the CSV into $G (common.gp's M4 thinning): words 3-8 physical blocks,
# 9-14 logical entries, 15-16 the cached-free band (physical and physical + cached_free)
# at the group's last row, which is all a shaded area needs: an envelope would paint the
# band under steep ramps of the physical line where no block is cached.
$G << EOD
EOD
$PHYS << EOD
EOD
$LOG << EOD
EOD
if (nrows > 0) {
    tf = 0; pf = 0; pn = 0; ptn = 0; px = 0; ptx = 0; lf = 0; ln = 0; ltn = 0; lx = 0; ltx = 0
    set table $G
    plot file skip 1 using (r = int($0), f = grp_first(r), tf = f ? $1 : tf, \
            ptn = f || $5 < pn ? $1 : ptn, pn = f || $5 < pn ? $5 : pn, \
            ptx = f || $5 > px ? $1 : ptx, px = f || $5 > px ? $5 : px, pf = f ? $5 : pf, \
            ltn = f || $6 < ln ? $1 : ltn, ln = f || $6 < ln ? $6 : ln, \
            ltx = f || $6 > lx ? $1 : ltx, lx = f || $6 > lx ? $6 : lx, lf = f ? $6 : lf, \
            grp_emit(r) ? sprintf("%.9f %.9f %.0f %.9f %.0f %.9f %.0f %.0f " \
                                  ."%.0f %.9f %.0f %.9f %.0f %.0f %.0f %.0f", \
                                  tf, $1, pf, ptn, pn, ptx, px, $5, \
                                  lf, ltn, ln, ltx, lx, $6, $5, $5 + $7) : "") \
        with table if (grp_emit(r))
    unset table
    set print $PHYS
    m4_base = 3
    @m4_expand
    set print $LOG
    m4_base = 9
    @m4_expand
    unset print
}
set datafile separator whitespace  # datablocks are space-separated

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set title "KV blocks over time\n".title_info font ",14"
    set xlabel "simulated time (s)"
    set ylabel "blocks"
    set format y "%.0f"
    # Whole blocks: a tiny pool gets a tic per block rather than repeated labels.
    if (has_usable && usable < 10) { set ytics 1 } else { set ytics autofreq }
    set key below center horizontal Left reverse samplen 3 spacing 1.1 width 2 height 0.6
    set yrange [0:*]
    set offsets 0, 0, graph 0.04, 0
    set xrange [0:*]
    set autoscale xfixmax
    if (nrows > 0) {
        # The cached-free band first, then logical under physical; keyentry orders the
        # legend.
        plot $G using 2:15:16 with filledcurves fc rgb c_green fs transparent solid 0.25 \
                noborder, \
             $LOG using 1:2 with lines lw 1.6 lc rgb c_orange, \
             $PHYS using 1:2 with lines lw 1.6 lc rgb c_blue, \
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
