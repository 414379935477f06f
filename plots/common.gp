# common.gp: house style shared by every kvsim figure; `load`ed first by each script.
#
# Every script renders the same figure twice, PNG (pngcairo) then SVG, both 1200x700:
#     do for [ext in "png svg"] { load plots.'/common.gp'; ... plot ... }
# is avoided (gnuplot cannot `load` a file that defines blocks inside a loop body reliably
# across versions); instead each script loops itself and calls `@set_term` and
# `set output outfile(ext)`.
#
# Variables (all optional, so a script also runs by hand:
#     gnuplot -e "dir='out/demo'" plots/blocks.gp):
#   dir     directory holding the input files (default ".")
#   outdir  where NAME.png / NAME.svg go (default dir)
#   suffix  appended to each output name; kvsim passes a temp suffix and renames the files
#           into place after gnuplot succeeded, so a figure is never seen half-written
if (!exists("dir")) dir = "."
if (!exists("outdir")) outdir = dir
if (!exists("suffix")) suffix = ""
outfile(name, ext) = outdir.'/'.name.'.'.ext.suffix

font_main = "Sans,12"
set_term_png = "set terminal pngcairo size 1200,700 noenhanced font font_main " \
               ."background rgb 'white' linewidth 1.2"
set_term_svg = "set terminal svg size 1200,700 fixed noenhanced font font_main " \
               ."background rgb 'white' linewidth 1.2"

set datafile separator comma
# A filtered-out row (an expression giving NaN) or an empty CSV cell is *missing*, not
# *invalid*: invalid points split a curve in two, and smooth cnormal/unique would then
# normalise or sort each piece separately.
set datafile missing NaN
set encoding utf8
# The axes style; a macro so that a script can restore it after drawing a bare legend.
house_style = "set grid back lc rgb '#dddddd' lw 1; set border 3 lc rgb '#444444'; \
               set tics nomirror out scale 0.6; set key noautotitle; \
               set autoscale xy; unset logscale; unset offsets; unset arrow; unset label"
@house_style

# Colours (Okabe-Ito, colour-blind safe).
c_blue   = "#0072B2"
c_orange = "#E69F00"
c_green  = "#009E73"
c_red    = "#D55E00"
c_purple = "#CC79A7"
c_sky    = "#56B4E9"
c_yellow = "#F0E442"
c_grey   = "#555555"
group_colors = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #555555 #F0E442"
group_color(i) = word(group_colors, (int(i) % 8) + 1)

# Thousands separators for labels: commas(28181) = "28,181".
commas(n) = (abs(n) < 1000) ? sprintf("%d", n) \
                            : commas(int(n / 1000)) . sprintf(",%03d", abs(int(n)) % 1000)

min(a, b) = a < b ? a : b
max(a, b) = a > b ? a : b

# Thinning long time series without changing the picture (M4 decimation).  300,000 steps
# drawn as a line over ~1100 pixel columns put hundreds of points in each column, and
# what shows is, per column, the line's first and last value and its extremes.  So the
# rows are taken in groups of every_n consecutive rows (kvsim picks about 1000 groups) and
# each group keeps exactly those four points: first, minimum, maximum, last, in time
# order.  A line through them is what the full series draws at this width, spikes
# included, from ~4000 points instead of 300,000 (every_n = 1 keeps every row).
#
# A script's single pass over the CSV writes one text line per group into $G (a
# sprintf'd `with table` column): word 1 the group's first time, word 2 its last time,
# then six words per series: v_first t_min v_min t_max v_max v_last.  `m4_state(v)`
# updates a series' running state (named by the prefix set in m4_p) from value v of row
# time t; `@m4_expand` prints series m4_base's points into the current `set print` target.
if (!exists("every_n")) every_n = 1
grp_first(r) = (int(r) % every_n == 0)
grp_emit(r) = (int(r) % every_n == every_n - 1 || int(r) == nrows - 1)
m4_expand = "do for [i = 1:|$G|] { L = $G[i]; \
    print word(L, 1).' '.word(L, m4_base); \
    if (real(word(L, m4_base + 1)) <= real(word(L, m4_base + 3))) { \
        print word(L, m4_base + 1).' '.word(L, m4_base + 2); \
        print word(L, m4_base + 3).' '.word(L, m4_base + 4) \
    } else { \
        print word(L, m4_base + 3).' '.word(L, m4_base + 4); \
        print word(L, m4_base + 1).' '.word(L, m4_base + 2) \
    }; \
    print word(L, 2).' '.word(L, m4_base + 5) }"
