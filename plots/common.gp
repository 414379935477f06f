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
# A long title comes in two pieces (kvsim breaks it at a " · "): one per line.
# top_shift: how much lower a multiplot's panels start for that extra line.
top_shift = 0
if (exists("title_info") && exists("title_info2")) {
    title_info = title_info."\n".title_info2; top_shift = 0.035 }

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

# Count tics with short labels, so a wide number never pushes the y label off the figure:
# `@si_ytics` after setting ymax_v (the largest value drawn) puts tics 1-2-5 apart, about
# six of them, labelled 250, 2.5k, 800k, 1.2M (integer steps of 1 below 10).
nice125(x) = (x <= 0 ? 1 : (e_ = 10**floor(log10(x)), m_ = x / e_, \
              e_ * (m_ < 1.5 ? 1 : m_ < 3.5 ? 2 : m_ < 7.5 ? 5 : 10)))
si(v) = abs(v) < 1e3 ? sprintf("%g", v) : abs(v) < 1e6 ? sprintf("%gk", v / 1e3) \
                                                        : sprintf("%gM", v / 1e6)
si_ytics = "set format y '%.0f'; \
    if (ymax_v < 10) { set ytics 1 } else { \
        si_step = nice125(ymax_v / 6.0); set ytics (); \
        do for [i_ = 0:int(ymax_v * 1.15 / si_step) + 1] { \
            set ytics add (si(i_ * si_step) i_ * si_step) } }"

# Seconds in human units, never an exponent: 12.3 ms, 1.85 s, 95.2 s, 41.2 min, 6.86 h.
human_s(x) = x < 1 ? sprintf("%.3g ms", x * 1000) : x < 100 ? sprintf("%.3g s", x) : \
             x < 6000 ? sprintf("%.3g min", x / 60) : sprintf("%.3g h", x / 3600)
