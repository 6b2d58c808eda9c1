package main

// `prometheus-parse --eval`: scrapes in, PromQL out. The scrapes (each an exposition, the Content-Type it was served
// with, the time it was taken and the target's labels) are stored as Prometheus's scrape loop stores them — parsed by
// textparse, every sample at the scrape's time, the target's labels added, a staleness marker for each series a
// scrape no longer has — in a TSDB head in a temporary folder, and each query is evaluated there by Prometheus's own
// PromQL engine (github.com/prometheus/prometheus/promql, default engine settings: 5 m lookback), as a rule or the
// expression browser would at that instant. The tests use it to show that docs/runbook.md's and the PrometheusRule's
// expressions read what the clients saw.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

type scrapeIn struct {
	TimestampMs  int64             `json:"timestampMs"`
	ContentType  string            `json:"contentType"`
	Body         string            `json:"body"`
	TargetLabels map[string]string `json:"targetLabels"`
}

type queryIn struct {
	Expr string `json:"expr"`
	AtMs int64  `json:"atMs"`
}

type evalIn struct {
	Scrapes []scrapeIn `json:"scrapes"`
	Queries []queryIn  `json:"queries"`
}

type seriesOut struct {
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
}

type queryOut struct {
	Expr string `json:"expr"`
	AtMs int64  `json:"atMs"`
	// An instant vector's samples (an empty list when nothing matched: a rule that does not fire), or a scalar's value.
	Vector *[]seriesOut `json:"vector,omitempty"`
	Scalar *float64     `json:"scalar,omitempty"`
}

func runEval() error {
	var in evalIn
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return fmt.Errorf("reading the scrapes and queries: %w", err)
	}
	dir, err := os.MkdirTemp("", "prometheus-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(dir, nil, nil, opts, nil)
	if err != nil {
		return err
	}
	defer db.Close()

	// Per target (its label set), the series its previous scrape had: those the next one lacks are marked stale.
	previous := map[string]map[string]labels.Labels{}
	for i, s := range in.Scrapes {
		target := labels.FromMap(s.TargetLabels)
		seen, err := appendScrape(db, s, target)
		if err != nil {
			return fmt.Errorf("scrape %d (at %d): %w", i, s.TimestampMs, err)
		}
		app := db.Appender(context.Background())
		for key, lset := range previous[target.String()] {
			if _, ok := seen[key]; !ok {
				if _, err := app.Append(0, lset, s.TimestampMs, math.Float64frombits(value.StaleNaN)); err != nil {
					return err
				}
			}
		}
		if err := app.Commit(); err != nil {
			return err
		}
		previous[target.String()] = seen
	}

	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: 2 * time.Minute, EnableAtModifier: true, EnableNegativeOffset: true})
	out := []queryOut{}
	for _, q := range in.Queries {
		query, err := engine.NewInstantQuery(context.Background(), db, nil, q.Expr, time.UnixMilli(q.AtMs))
		if err != nil {
			return fmt.Errorf("%s: %w", q.Expr, err)
		}
		res := query.Exec(context.Background())
		if res.Err != nil {
			return fmt.Errorf("%s: %w", q.Expr, res.Err)
		}
		result := queryOut{Expr: q.Expr, AtMs: q.AtMs}
		switch v := res.Value.(type) {
		case promql.Vector:
			vector := []seriesOut{}
			for _, sample := range v {
				if sample.H != nil {
					return fmt.Errorf("%s: a native histogram in the result", q.Expr)
				}
				vector = append(vector, seriesOut{Labels: sample.Metric.Map(), Value: sample.F})
			}
			result.Vector = &vector
		case promql.Scalar:
			result.Scalar = &v.V
		default:
			return fmt.Errorf("%s: a %s, not an instant vector or a scalar", q.Expr, res.Value.Type())
		}
		query.Close()
		out = append(out, result)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// appendScrape stores one scrape at its time, each series with the target's labels (a label the target sets wins, as
// with honor_labels: false, the exposition's own being kept as exported_<name>). It returns the series it stored.
func appendScrape(db storage.Appendable, s scrapeIn, target labels.Labels) (map[string]labels.Labels, error) {
	p, err := textparse.New([]byte(s.Body), s.ContentType, "", false, false, false, labels.NewSymbolTable())
	if p == nil || err != nil {
		return nil, fmt.Errorf("Content-Type %q: %w", s.ContentType, err)
	}
	app := db.Appender(context.Background())
	seen := map[string]labels.Labels{}
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = app.Rollback()
			return nil, err
		}
		if entry != textparse.EntrySeries {
			continue
		}
		_, _, v := p.Series()
		var parsed labels.Labels
		p.Labels(&parsed)
		b := labels.NewBuilder(parsed)
		target.Range(func(l labels.Label) {
			if own := parsed.Get(l.Name); own != "" {
				b.Set("exported_"+l.Name, own)
			}
			b.Set(l.Name, l.Value)
		})
		lset := b.Labels()
		if _, err := app.Append(0, lset, s.TimestampMs, v); err != nil {
			_ = app.Rollback()
			return nil, fmt.Errorf("%s: %w", lset.String(), err)
		}
		seen[lset.String()] = lset
	}
	return seen, app.Commit()
}
