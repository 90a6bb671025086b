package fakemodel

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Host is how one client talks to its model.
type Host struct {
	// API is the wire API the client speaks.
	API API
	// IsSub tells a sub-agent's request by what the client itself puts in
	// it (a header, a line of its system prompt), for a sub-agent that
	// carries no scripted marker; nil leaves the markers alone to tell.
	IsSub func(*Request) bool
}

// Server is a scripted model on 127.0.0.1.
type Server struct {
	host Host
	url  string
	srv  *http.Server

	mu      sync.Mutex
	scripts Scripts
	reqs    []*Request
	errs    []string
	answers int
}

// Start serves scripts in host's API on 127.0.0.1:0 until the test ends.
func Start(t testing.TB, host Host, scripts Scripts) *Server {
	t.Helper()
	// 127.0.0.1 only, never a wildcard address: the client is the only
	// caller, and nothing else on the machine should reach the script.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake model: listen on 127.0.0.1: %v", err)
	}
	s := &Server{host: host, scripts: scripts, url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
	})
	return s
}

// URL is the server's root, http://127.0.0.1:PORT, with no path: a suite
// appends what its client's base URL holds (/v1, /s/NAME/v1).
func (s *Server) URL() string { return s.url }

// Play replaces the scripts, for a test that runs the client more than
// once.
func (s *Server) Play(scripts Scripts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = scripts
}

// Scripts are the scripts being played.
func (s *Server) Scripts() Scripts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scripts
}

// Requests is a snapshot of every request so far, model turns or not.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Problems are the requests the server could not read. A suite reports
// them: a request that silently failed looks just like a child that never
// ran.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// ServeHTTP records the request and answers it: a model turn from the
// scripts, anything else as the API does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	body, err := readBody(r)
	req.Body = body
	turn := s.host.API.isTurn(r)
	if err == nil && turn {
		if err = s.host.API.read(body, req); err != nil {
			err = fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, err)
			*req = Request{At: req.At, Method: req.Method, Path: req.Path, Header: req.Header, Body: body}
		}
	}

	s.mu.Lock()
	scripts := s.scripts
	if err == nil && turn {
		s.classify(req, scripts)
		s.answers++
	}
	n := s.answers
	req.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	if err != nil {
		s.errs = append(s.errs, err.Error())
	}
	s.mu.Unlock()

	switch {
	case err != nil:
		s.host.API.refuse(w, err.Error())
	case !turn:
		s.host.API.serveOther(w, r)
	default:
		t := scripts.answer(req)
		// A script may hand out one Turn value many times (Steps does): the
		// ids are this answer's own, so they go into a copy of its calls.
		t.Calls = slices.Clone(t.Calls)
		for i := range t.Calls {
			if t.Calls[i].ID == "" {
				t.Calls[i].ID = s.host.API.callID(n, i)
			}
		}
		s.host.API.write(w, req, t, n)
	}
}

// classify sets the request's Kind, and the marker that picks a
// sub-agent's script.
func (s *Server) classify(req *Request, scripts Scripts) {
	req.Marker = scripts.marker(req)
	switch {
	case req.Marker != "", s.host.IsSub != nil && s.host.IsSub(req):
		req.Kind = Sub
	case len(req.Tools) > 0:
		req.Kind = Main
	default:
		req.Kind = Side
	}
}

// readBody reads a request's body, decompressing what the clients
// compress.
func readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = r.Body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: gzip body: %w", r.Method, r.URL.Path, err)
		}
		body = gz
	default:
		return nil, fmt.Errorf("%s %s: body in %q encoding, which the fake model does not read", r.Method, r.URL.Path, enc)
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		return b, fmt.Errorf("%s %s: read body: %w", r.Method, r.URL.Path, err)
	}
	return b, nil
}

// pathEnds reports whether the path ends with the API route suffix, so
// that any base-URL prefix before it is kept.
func pathEnds(r *http.Request, suffix string) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, suffix)
}
