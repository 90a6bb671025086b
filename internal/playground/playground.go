package playground

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
	"github.com/spawngate/spawngate/internal/server"
	"github.com/spawngate/spawngate/policy"
)

// Config is how a playground judges and whom it answers.
type Config struct {
	// Server holds the limits, admission, timeouts, token and wording of
	// the one decision endpoint, as serve's Config does; its PolicyFile is
	// not read, and its Gate is made to read no files.
	Server server.Config
	// Hosts are the Host headers the playground answers (host:port, as a
	// browser sends it): the address it listens on, and localhost's names
	// for it. A request naming any other host is refused, so that a page
	// of another site cannot reach it by a name it rebinds to 127.0.0.1.
	Hosts []string
	// MaxGates bounds the gates kept for the policies judged lately
	// (DefaultMaxGates when 0).
	MaxGates int
	// MaxChecksBytes bounds the checks field (DefaultMaxChecksBytes when
	// 0): compiling Rego costs many times its size in memory, and the
	// body's own bound (--max-bytes) is a plan's, far larger.
	MaxChecksBytes int64
}

// DefaultMaxChecksBytes is the largest checks field unless told
// otherwise: an operator's checks are kilobytes; this is room for many.
const DefaultMaxChecksBytes = 256 << 10

// DefaultMaxGates is how many gates a playground keeps unless told
// otherwise: a policy being edited, and a few to switch between.
const DefaultMaxGates = 8

// JudgePath is the playground's decision endpoint.
const JudgePath = "/v1/judge"

// Playground serves the page and judges what it sends.
type Playground struct {
	cfg    Config
	srv    *server.Server
	gates  *gates
	hosts  map[string]bool
	origin *http.CrossOriginProtection
	csp    string
}

// New builds a playground.
func New(cfg Config) (*Playground, error) {
	if cfg.MaxGates <= 0 {
		cfg.MaxGates = DefaultMaxGates
	}
	if cfg.MaxChecksBytes <= 0 {
		cfg.MaxChecksBytes = DefaultMaxChecksBytes
	}
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("no host to answer: a playground checks every request's Host")
	}
	cfg.Server.Gate.NoFiles = true
	cfg.Server.Gate.Checks, cfg.Server.Gate.Bundle, cfg.Server.Gate.ResolvePaths = nil, "", false
	srv, err := server.NewWithoutPolicy(cfg.Server)
	if err != nil {
		return nil, err
	}
	p := &Playground{cfg: cfg, srv: srv, gates: newGates(cfg.MaxGates), hosts: map[string]bool{}, origin: http.NewCrossOriginProtection()}
	for _, h := range cfg.Hosts {
		p.hosts[strings.ToLower(h)] = true
	}
	p.csp = contentSecurityPolicy()
	return p, nil
}

// Drain makes the playground refuse new decisions while those in flight
// finish.
func (p *Playground) Drain() { p.srv.Drain() }

// Hosts are the Host headers a playground listening on addr (as
// net.Listener.Addr gives it) answers: the address itself and, on a
// loopback address, localhost's names for its port. extra names more,
// each host:port or a host given the port of addr.
func Hosts(addr string, extra ...string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr}
	}
	hosts := []string{net.JoinHostPort(host, port)}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		hosts = append(hosts, "localhost:"+port, "127.0.0.1:"+port, "[::1]:"+port)
	}
	for _, e := range extra {
		if _, _, err := net.SplitHostPort(e); err != nil {
			e = net.JoinHostPort(e, port)
		}
		hosts = append(hosts, e)
	}
	return hosts
}

// Handler is the playground's routes: the page, its script and style,
// the examples, and the decision endpoint.
func (p *Playground) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !p.hosts[strings.ToLower(r.Host)] {
			refuse(w, http.StatusForbidden, fmt.Sprintf("this playground answers only requests addressed to %s", p.cfg.Hosts[0]))
			return
		}
		if err := p.origin.Check(r); err != nil {
			refuse(w, http.StatusForbidden, "requests from other origins are refused")
			return
		}
		switch r.URL.EscapedPath() {
		case "/":
			p.asset(w, r, "text/html; charset=utf-8", pageHTML)
		case "/playground.js":
			p.asset(w, r, "text/javascript; charset=utf-8", pageJS)
		case "/playground.css":
			p.asset(w, r, "text/css; charset=utf-8", pageCSS)
		case "/examples":
			p.asset(w, r, "application/json", examplesJSON())
		case JudgePath:
			// The rules of the gate that judged, for the report to name
			// each rule's title: the judging goroutine may outlive its
			// answer (server.Decisions answers on time regardless).
			var rules atomic.Pointer[[]report.Rule]
			p.srv.Decisions(server.Decider{
				Path:     JudgePath,
				JSONOnly: true,
				Judge: func(ctx context.Context, source string, body []byte) (report.Result, error) {
					return p.judge(ctx, source, body, &rules)
				},
				Answer: func(w http.ResponseWriter, status int, rep *report.Report) {
					if r := rules.Load(); r != nil {
						rep.Rules = *r
					}
					p.answer(w, status, rep)
				},
			})(w, r)
		default:
			refuse(w, http.StatusNotFound, "not found")
		}
	})
}

// asset answers a GET with one of the page's files.
func (p *Playground) asset(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		refuse(w, http.StatusMethodNotAllowed, "only GET")
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Security-Policy", p.csp)
	w.Header().Set("X-Frame-Options", "SAMEORIGIN")
	w.Write(body)
}

// refuse answers a request the playground does not serve: a one-line
// JSON error, as the decision endpoint's errors carry one.
func refuse(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"verdict": string(report.NotJudged), "error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// request is what the page sends: the plan, the operator policy (its
// exceptions among its keys) and the operator's checks, as text.
type request struct {
	Plan   string `json:"plan"`
	Policy string `json:"policy"`
	Checks string `json:"checks"`
}

// Names of the pasted documents in messages, by their syntax.
const (
	planName   = "plan"
	policyName = "policy"
	checksName = "checks.rego"
)

// named names a pasted document by its syntax, as check reads a file
// without an extension: JSON when it starts with { or [, else YAML.
func named(name, text string) string {
	if document.Sniffed([]byte(text)) == document.JSON {
		return name + ".json"
	}
	return name + ".yaml"
}

// judge judges one request of the page: its policy and checks make the
// gate (kept by their digest), which judges its plan.
func (p *Playground) judge(ctx context.Context, source string, body []byte, rules *atomic.Pointer[[]report.Rule]) (report.Result, error) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return report.Result{}, &judge.Error{Kind: judge.Document, Source: source, Msg: "not the playground's request ({\"plan\": ..., \"policy\": ..., \"checks\": ...}): " + err.Error()}
	}
	if n := int64(len(req.Checks)); n > p.cfg.MaxChecksBytes {
		return report.Result{}, &judge.Error{Kind: judge.Limit, Source: checksName, Limit: "max-checks-bytes",
			Msg: fmt.Sprintf("the checks are %d bytes, more than the %d the playground compiles (limit --max-checks-bytes)", n, p.cfg.MaxChecksBytes)}
	}
	if strings.TrimSpace(req.Policy) == "" {
		return report.Result{}, &judge.Error{Kind: judge.NoPolicy, Source: policyName, Msg: "no operator policy is given: paste one (a plan's own policy can narrow the operator's, never stand in for it)"}
	}
	g, err := p.gates.get(ctx, p.cfg.Server.Gate, named(policyName, req.Policy), []byte(req.Policy), modules(req.Checks))
	if err != nil {
		var e *judge.Error
		if errors.As(err, &e) && e.Kind == judge.Option {
			// Only what the policy asks for can make an option error
			// here: it is the policy's problem.
			e.Kind = judge.Document
		}
		return report.Result{}, err
	}
	if r, err := g.Rules(); err == nil {
		rules.Store(&r)
	}
	planSource := named(planName, req.Plan)
	res, err := g.JudgeBytes(ctx, planSource, []byte(req.Plan), p.cfg.Server.MaxListed)
	if err != nil {
		return res, err
	}
	res.Text = []byte(req.Plan)
	return res, nil
}

// packageLine finds where each module of the checks field starts: its
// package line, with the comments just above it (its METADATA).
var packageLine = regexp.MustCompile(`(?m)^package\s`)

// modules splits the checks field into its Rego modules, one per package
// line. Each is padded with the lines before it, so that an error names
// the line of the field; all but the first are named by their first line
// in the field.
func modules(text string) []policy.Module {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	var starts []int
	for i, l := range lines {
		if packageLine.MatchString(l) {
			s := i
			for s > 0 && strings.HasPrefix(strings.TrimSpace(lines[s-1]), "#") && (len(starts) == 0 || s-1 > starts[len(starts)-1]) {
				s--
			}
			starts = append(starts, s)
		}
	}
	if len(starts) == 0 {
		return []policy.Module{{Name: checksName, Source: text}}
	}
	starts[0] = 0
	var mods []policy.Module
	for k, s := range starts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		name := checksName
		if k > 0 {
			name = fmt.Sprintf("%s (from line %d)", checksName, s+1)
		}
		mods = append(mods, policy.Module{Name: name, Source: strings.Repeat("\n", s) + strings.Join(lines[s:end], "")})
	}
	return mods
}

// answer is what the page reads: the verdict, the report's last line, the
// one-line error when there is one, and the HTML report the page shows in
// its sandboxed frame.
type answer struct {
	Verdict report.Verdict `json:"verdict"`
	Summary string         `json:"summary"`
	Error   string         `json:"error,omitempty"`
	HTML    string         `json:"html"`
}

func (p *Playground) answer(w http.ResponseWriter, status int, rep *report.Report) {
	a := answer{Verdict: rep.Verdict, Error: rep.Error}
	if a.Error == "" && len(rep.Results) == 1 {
		a.Error = rep.Results[0].Error
	}
	var text bytes.Buffer
	render.Text{}.Render(&text, rep)
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	a.Summary = lines[len(lines)-1]
	var page bytes.Buffer
	if err := (render.HTML{}).Render(&page, rep); err != nil {
		status, a.Verdict, a.Error = http.StatusInternalServerError, report.NotJudged, "internal error: rendering the report: "+err.Error()
	}
	a.HTML = page.String()
	b, _ := json.Marshal(a)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// contentSecurityPolicy is the page's: nothing from anywhere but the
// playground itself, requests to it alone, and in the report's frame
// (which inherits it) the report's own style sheet, by its hash.
func contentSecurityPolicy() string {
	styles := []string{"'self'"}
	var page bytes.Buffer
	render.HTML{}.Render(&page, &report.Report{Results: []report.Result{}})
	for _, m := range styleElement.FindAllSubmatch(page.Bytes(), -1) {
		sum := sha256.Sum256(m[1])
		styles = append(styles, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return "default-src 'none'; script-src 'self'; style-src " + strings.Join(styles, " ") +
		"; connect-src 'self'; frame-src 'self'; child-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}

var styleElement = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
