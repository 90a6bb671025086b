package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/spawngate/spawngate/internal/report"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	registry       *prometheus.Registry
	decisions      *prometheus.CounterVec // by verdict
	violations     *prometheus.CounterVec // by rule
	errors         *prometheus.CounterVec // by kind
	latency        prometheus.Histogram
	inFlight       prometheus.Gauge
	waiting        prometheus.Gauge
	reloads        prometheus.Counter
	reloadFailures prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spawngate_decisions_total", Help: "Decisions answered, by verdict (pass, block, error, ignored).",
		}, []string{"verdict"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spawngate_violations_total", Help: "Violations found, by rule ID.",
		}, []string{"rule"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spawngate_errors_total", Help: "Requests that could not be judged, by kind.",
		}, []string{"kind"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "spawngate_decision_duration_seconds", Help: "Time from a request's arrival to its answer.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spawngate_decisions_in_flight", Help: "Decisions being evaluated now.",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spawngate_decisions_waiting", Help: "Requests waiting for memory to read their body or for a turn to evaluate.",
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "spawngate_reloads_total", Help: "Policy reloads that took effect.",
		}),
		reloadFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "spawngate_reload_failures_total", Help: "Policy reloads that failed; the old policy kept serving.",
		}),
	}
	m.registry.MustRegister(m.decisions, m.violations, m.errors, m.latency, m.inFlight, m.waiting, m.reloads, m.reloadFailures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// observe counts one answer: its verdict, its violations by rule, its
// error kind (when kind is not ""), and its latency.
func (m *metrics) observe(verdict, kind string, rep *report.Report, took time.Duration) {
	m.decisions.WithLabelValues(verdict).Inc()
	if kind != "" {
		m.errors.WithLabelValues(kind).Inc()
	}
	if rep != nil {
		for _, res := range rep.Results {
			for _, c := range res.Children {
				for _, v := range c.Violations {
					m.violations.WithLabelValues(v.Rule).Inc()
				}
			}
		}
	}
	m.latency.Observe(took.Seconds())
}
