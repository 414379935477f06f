# sweep_common.gp: what sweep_block_size.gp and sweep_watermark.gp share: reading
# sweep.csv by column name, the row -> group map, and the shared legend strip.
#
# Variables (kvsim computes them from sweep.csv; all optional):
#   ngroups      number of line groups (configurations that differ in a knob other than
#                the one on the x axis); default 1
#   rowgroup     one group index per data row, space-separated ("0 0 1 1 ..."); default
#                all 0
#   gtitle0, gtitle1, ...   legend text per group ("watermark 0.05")
#   xvals        the swept knob's distinct values, space-separated, for the x tics
#   title_info   what is common to every configuration, for the title (model, GPU,
#                TP/PP, KV dtype, block size when it is not on x)
#   title_knobs  the other knobs common to every configuration (a line of its own)
#   panels       the panels to draw, 1-based, space-separated (default all): kvsim leaves
#                out a metric that is 0 in every configuration
#   dropped      what was left out, for a line under the title
load plots.'/common.gp'
file = dir.'/sweep.csv'
set datafile columnheaders
if (!exists("ngroups")) ngroups = 1
if (!exists("title_info")) title_info = dir
# The title's lines under the figure's name: setup, shared knobs, what was left out; the
# panels start lower for each line beyond the first.
title_lines = 1
if (exists("title_knobs") && title_knobs ne "") {
    title_info = title_info."\n".title_knobs; title_lines = title_lines + 1 }
if (exists("dropped")) { title_info = title_info."\n".dropped; title_lines = title_lines + 1 }
in_group(g) = exists("rowgroup") ? int(word(rowgroup, int($0) + 1)) == g : 1
gtitle(g) = exists(sprintf("gtitle%d", g)) ? value(sprintf("gtitle%d", g)) : ""
gpt(g) = word("7 5 9 11 13 15 4 6", (g % 8) + 1) + 0

# Panel grid by hand (not `set multiplot layout`, whose panels cannot host a key wider
# than themselves): `panel_at(r, c)` then `@panel` puts the next plot in row r, column c
# (from 0, top left) of a grid_rows x grid_cols grid filling the screen between
# grid_left/right/bottom/top, with gap_x/gap_y between panels (screen fractions).
grid_left = 0.075; grid_right = 0.985; gap_x = 0.075; gap_y = 0.12
grid_top = 0.86 - 0.035 * (title_lines - 1)
grid_bottom = (ngroups > 1 ? 0.2 : 0.1)
panel = "pw = (grid_right - grid_left - (grid_cols - 1) * gap_x) / grid_cols; \
         ph = (grid_top - grid_bottom - (grid_rows - 1) * gap_y) / grid_rows; \
         set lmargin at screen grid_left + pc * (pw + gap_x); \
         set rmargin at screen grid_left + pc * (pw + gap_x) + pw; \
         set tmargin at screen grid_top - pr * (ph + gap_y); \
         set bmargin at screen grid_top - pr * (ph + gap_y) - ph"

# The panels kept laid out in a grid (`@grid_of_panels` after setting panels_all, the
# count a script has): up to 3 in a row, 4 as 2 x 2, 5 or 6 as 2 x 3; `@panel_at` then
# places the p-th panel drawn (from 0) and is followed by `@panel`.
if (!exists("panels")) panels = ""
panel_on(k) = (panels eq "" ? 1 : strstrt(" ".panels." ", sprintf(" %d ", k)) > 0)
grid_of_panels = "n_panels = (panels eq '' ? panels_all : words(panels)); \
    grid_rows = (n_panels <= 3 ? 1 : 2); grid_cols = (n_panels <= 3 ? n_panels : n_panels == 4 ? 2 : 3)"
panel_at = "pr = p_drawn / grid_cols; pc = p_drawn % grid_cols; p_drawn = p_drawn + 1"

# The legend: one entry per group, in a strip along the bottom of the whole figure, drawn
# as a plot of its own with nothing but the key (`@legend_strip` after the panels).
legend_strip = "if (ngroups > 1) { \
    set lmargin at screen 0.02; set rmargin at screen 0.98; \
    set bmargin at screen 0.005; set tmargin at screen 0.075; \
    unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; \
    unset logscale; unset arrow; unset label; unset offsets; \
    set xrange [0:1]; set yrange [0:1]; \
    set key center center horizontal samplen 2.5 width 2; \
    plot for [g = 0:ngroups - 1] NaN with linespoints lw 2 pt gpt(g) ps 1.3 \
        lc rgb group_color(g) title gtitle(g) }"

# x tics exactly at the swept values (`@set_xvals`), when kvsim passed them.
set_xvals = "if (exists('xvals')) { \
    set xtics (); do for [v in xvals] { set xtics add (v real(v)) } }"

# Count axes: integer tics when the counts are small, [0:1] when all are zero (`@count_y`
# after setting count_col to the column name).
count_y = "stats file using (column(count_col)) nooutput; \
    if (STATS_max < 1) { set yrange [0:1]; set ytics 1 } \
    else { set yrange [0:*]; if (STATS_max < 6) { set ytics 1 } else { set ytics autofreq } }"
