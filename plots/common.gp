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
set_term_png = "set terminal pngcairo size 1200,700 noenhanced font font_main background rgb 'white' linewidth 1.2"
set_term_svg = "set terminal svg size 1200,700 fixed noenhanced font font_main background rgb 'white' linewidth 1.2"

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
group_color(i) = word("#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #555555 #F0E442", (int(i) % 8) + 1)

# Thousands separators for labels: commas(28181) = "28,181".
commas(n) = (abs(n) < 1000) ? sprintf("%d", n) : commas(int(n / 1000)) . sprintf(",%03d", abs(int(n)) % 1000)
