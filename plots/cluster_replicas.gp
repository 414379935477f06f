# cluster_replicas.gp: how the router spread the work, from a cluster run's summary.json
# (per_replica): requests routed to each replica (finished ones darker) and each
# replica's prefix hit rate, with the cluster's hit rate as a line.
#
# Variables (kvsim passes them; each is optional):
#   title_info   the run's title;  router  the policy
#   nrep         replicas
#   rep_requests, rep_finished, rep_hit   space-separated, one per replica
#   hit_all      the cluster's hit rate (%);  req_gini, req_mom   imbalance of requests
if (!exists("plots")) plots = "plots"
load plots.'/common.gp'
name = "cluster_replicas"
if (!exists("title_info")) title_info = dir
if (!exists("nrep")) nrep = 0
if (!exists("router")) router = ""
if (!exists("rep_requests")) rep_requests = ""
if (!exists("rep_finished")) rep_finished = rep_requests
if (!exists("rep_hit")) rep_hit = ""
v(s, i) = real(word(s, int(i) + 1))
lastrep = nrep - 1  # gnuplot's sample ranges take a plain value; only a
# plot's first clause says `sample`, later ones give the range alone
imb = exists("req_gini") ? sprintf(" (Gini %.3f, max/mean %.3f)", req_gini, req_mom) : ""

do for [ext in "png svg"] {
    if (ext eq "png") { @set_term_png } else { @set_term_svg }
    set output outfile(name, ext)
    set multiplot layout 1, 2 title "Routing by ".router." over ".nrep." replicas\n".title_info \
        font ",14" margins 0.07, 0.98, 0.16, 0.84 - top_shift spacing 0.08, 0
    set style fill solid 0.85 noborder
    set boxwidth 0.7
    set xrange [-0.6 : nrep - 0.4]
    if (nrep <= 24) { set xtics 1 } else { set xtics autofreq }
    set xlabel "replica"

    set title "requests routed".imb font ",12"
    set ylabel "requests"
    set yrange [0:*]
    set key top right
    plot sample [i=0:lastrep:1] '+' using (i):(v(rep_requests, i)) with boxes \
            lc rgb c_sky title "routed", \
         [i=0:lastrep:1] '+' using (i):(v(rep_finished, i)) with boxes \
            lc rgb c_blue title "finished"

    set title "prefix hit rate (first admissions)" font ",12"
    set ylabel "hit rate (% of prompt tokens)"
    set yrange [0:*]
    plot sample [i=0:lastrep:1] '+' using (i):(v(rep_hit, i)) with boxes lc rgb c_green \
            title "per replica", \
         (exists("hit_all") ? hit_all : NaN) with lines dt (8, 5) lw 2 lc rgb c_red \
            title (exists("hit_all") ? sprintf("cluster %.2f%%", hit_all) : "")
    unset multiplot
    set output
}
