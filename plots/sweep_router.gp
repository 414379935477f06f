# sweep_router.gp: routers compared, from sweep.csv, four panels with one bar per router
# (x) and per group of the other knobs (say, replica counts):
#   prefix hit rate; P99 time to first token; imbalance (Gini of the requests routed to
#   each replica); router over-prediction (requests whose predicted hit was above the
#   hit granted, as a share of the requests).
# kvsim draws it when sweep.csv holds two or more routers; rows of one replica have no
# router and are left out; a metric that is 0 for every router (no hit on a content-less
# trace, no over-prediction) is left out and named under the title.  Variables: see
# sweep_common.gp, and
#   ncat, cat0, cat1, ...   the routers on the x axis
#   rowx                    each row's router index (-1: left out), space-separated
if (!exists("plots")) plots = "plots"
if (!exists("dir")) dir = "."
load plots.'/sweep_common.gp'
name = "sweep_router"
if (!exists("ncat")) ncat = 1
if (!exists("rowx")) rowx = ""
rx(r) = int(word(rowx, int(r) + 1))
bw = 0.8 / ngroups
# The bar of row $0 in group g: at its router's slot, shifted for the group.
xpos(g) = (in_group(g) && rx($0) >= 0 ? rx($0) + (g - (ngroups - 1) / 2.0) * bw : NaN)
catname(c) = exists(sprintf("cat%d", c)) ? value(sprintf("cat%d", c)) : ""
set_cats = "set xtics (); do for [c = 0:ncat - 1] { set xtics add (catname(c) c) }"

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot title "Routers compared\n".title_info font ",14"
    panels_all = 4
    @grid_of_panels
    gap_x = 0.09
    p_drawn = 0
    set style fill solid 0.85 noborder
    set boxwidth bw * 0.9
    set xrange [-0.6 : ncat - 0.4]
    @set_cats
    set xtics nomirror out scale 0 font ",10"
    unset key

    if (panel_on(1)) {
        @panel_at
        @panel
        set title "prefix hit rate (first admissions)" font ",12"
        set ylabel "hit rate (%)"
        set yrange [0:*]
        plot for [g = 0:ngroups - 1] file using (xpos(g)):(100 * column("hit_rate")) \
            with boxes lc rgb group_color(g)
    }
    if (panel_on(2)) {
        @panel_at
        @panel
        set title "P99 time to first token" font ",12"
        set ylabel "TTFT P99 (s)"
        plot for [g = 0:ngroups - 1] file using (xpos(g)):(column("ttft_p99_s")) \
            with boxes lc rgb group_color(g)
    }
    if (panel_on(3)) {
        @panel_at
        @panel
        set title "imbalance: Gini of requests per replica" font ",12"
        set ylabel "Gini (0 = even)"
        plot for [g = 0:ngroups - 1] file using (xpos(g)):(column("requests_gini")) \
            with boxes lc rgb group_color(g)
    }
    if (panel_on(4)) {
        @panel_at
        @panel
        set title "router over-prediction" font ",12"
        set ylabel "requests predicted above their hit (%)"
        plot for [g = 0:ngroups - 1] file \
            using (xpos(g)):(100 * column("overpredicted") / (column("finished") + column("rejected"))) \
            with boxes lc rgb group_color(g)
    }

    @legend_strip
    @house_style
    unset multiplot
    set output
}
