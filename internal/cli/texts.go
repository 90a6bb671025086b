package cli

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// showsText tells whether a report the run writes shows each document's
// own text (render.Format.ShowsText): only then does the run keep it.
func showsText(format render.Format, outputs []reportOutput) bool {
	if format.ShowsText {
		return true
	}
	for _, o := range outputs {
		if o.format.ShowsText {
			return true
		}
	}
	return false
}

// documentTexts keeps the text of every document a run reads, by source,
// to hand each plan's result its own (report.Result.Text). Plans are read
// on every core, so it locks.
type documentTexts struct {
	mu    sync.Mutex
	bySrc map[string][]byte
}

// keepTexts is a documentTexts when a report of the run shows texts, and
// nil otherwise: the other formats pay nothing, not even a copy.
func keepTexts(format render.Format, outputs []reportOutput) *documentTexts {
	if !showsText(format, outputs) {
		return nil
	}
	return &documentTexts{bySrc: map[string][]byte{}}
}

// read keeps a copy of a document as it is read (judge.Options.OnRead,
// which must not keep data itself).
func (d *documentTexts) read(source string, data []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bySrc[source] = bytes.Clone(data)
}

// fill gives each result the text of the document it judged.
func (d *documentTexts) fill(rep *report.Report) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range rep.Results {
		if text, ok := d.bySrc[rep.Results[i].Source]; ok {
			rep.Results[i].Text = text
		}
	}
}

// definitionText is an agent definition's text, for a report that shows
// it: read again, as the host adapter already read it within the limits,
// and never more than max bytes of it; nil when it cannot be read.
func definitionText(file string, max int64) []byte {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return nil
	}
	return data
}
