// prometheus-parse reads a metrics exposition on stdin and parses it with the parser Prometheus itself uses when it
// scrapes (github.com/prometheus/prometheus/model/textparse, the version of the docker-compose Prometheus), chosen by
// the Content-Type the target answered with (the one argument), as the scrape loop chooses it. It prints the samples as
// JSON, exemplars included, or the parser's error and exit status 1. What the scrape loop refuses after parsing is
// refused too: a series given twice (Prometheus drops the second as a duplicate sample) and an exemplar whose label
// set is longer than OpenMetrics allows (128 characters).
//
// The tests use it (test/support/prometheus-parse.ts builds it with `go build` on first use) to show that /metrics is
// what Prometheus reads, in both formats, rather than what a hand-written parser accepts.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

type exemplarOut struct {
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
	// Milliseconds since the epoch; absent when the exemplar has none.
	TimestampMs *int64 `json:"timestampMs,omitempty"`
}

type sampleOut struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels"`
	Value     float64           `json:"value"`
	Exemplars []exemplarOut     `json:"exemplars,omitempty"`
}

type result struct {
	// The parser Prometheus picked for the Content-Type: "openmetrics" or "prometheus".
	Parser string `json:"parser"`
	// Metric family name → type, from the # TYPE lines.
	Types   map[string]string `json:"types"`
	Samples []sampleOut       `json:"samples"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: prometheus-parse CONTENT-TYPE < exposition\n       prometheus-parse --eval < {scrapes, queries} (eval.go)")
		os.Exit(2)
	}
	command := func() error { return run(os.Args[1]) }
	if os.Args[1] == "--eval" {
		command = runEval
	}
	if err := command(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(contentType string) error {
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	// No fallback protocol: a target that answers without a usable Content-Type fails its scrape.
	p, err := textparse.New(body, contentType, "", false, false, false, labels.NewSymbolTable())
	if p == nil {
		return fmt.Errorf("Content-Type %q: %w", contentType, err)
	}
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", contentType, err)
	}
	out := result{Types: map[string]string{}, Samples: []sampleOut{}}
	switch p.(type) {
	case *textparse.OpenMetricsParser:
		out.Parser = "openmetrics"
	case *textparse.PromParser:
		out.Parser = "prometheus"
	default:
		return fmt.Errorf("Content-Type %q is neither text format", contentType)
	}
	seen := map[uint64]string{}
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch entry {
		case textparse.EntryType:
			name, typ := p.Type()
			out.Types[string(name)] = string(typ)
		case textparse.EntrySeries:
			_, _, value := p.Series()
			var lset labels.Labels
			p.Labels(&lset)
			if previous, ok := seen[lset.Hash()]; ok && previous == lset.String() {
				return fmt.Errorf("duplicate series %s", lset.String())
			}
			seen[lset.Hash()] = lset.String()
			sample := sampleOut{Name: lset.Get(labels.MetricName), Labels: map[string]string{}, Value: value}
			lset.Range(func(l labels.Label) {
				if l.Name != labels.MetricName {
					sample.Labels[l.Name] = l.Value
				}
			})
			var e exemplar.Exemplar
			for p.Exemplar(&e) {
				length := 0
				ex := exemplarOut{Labels: map[string]string{}, Value: e.Value}
				e.Labels.Range(func(l labels.Label) {
					length += utf8.RuneCountInString(l.Name) + utf8.RuneCountInString(l.Value)
					ex.Labels[l.Name] = l.Value
				})
				if length > exemplar.ExemplarMaxLabelSetLength {
					return fmt.Errorf("exemplar of %s: label set longer than %d characters", lset.String(), exemplar.ExemplarMaxLabelSetLength)
				}
				if e.HasTs {
					ts := e.Ts
					ex.TimestampMs = &ts
				}
				sample.Exemplars = append(sample.Exemplars, ex)
				e = exemplar.Exemplar{}
			}
			out.Samples = append(out.Samples, sample)
		case textparse.EntryHistogram:
			return errors.New("a native histogram in a text exposition")
		}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
