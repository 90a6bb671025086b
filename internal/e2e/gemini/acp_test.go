package gemini

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// driveACP runs the client started as `--acp` (the Agent Client Protocol,
// JSON-RPC over its stdin and stdout, one message a line, as an IDE such as
// Zed drives it) through one prompt: initialize, a new session in root
// (authenticating with the API key when the client asks), the user's
// prompt; a permission the client asks for is granted (the first allow
// option), anything else the client asks is refused. It returns when the
// prompt's turn has ended and the client has exited, with every message
// the client sent, one a line.
func driveACP(ctx context.Context, cmd *exec.Cmd, root string) (string, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var transcript strings.Builder
	a := acpConn{ctx: ctx, in: in, lines: lines, transcript: &transcript}
	err = a.session(root)
	_ = in.Close()
	// The client exits once its stdin closes; what it still prints is kept.
	for l := range lines {
		transcript.WriteString(l + "\n")
	}
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	return transcript.String(), err
}

type acpConn struct {
	ctx        context.Context
	in         io.Writer
	lines      <-chan string
	transcript *strings.Builder
	id         int
}

// acpMessage is any JSON-RPC message: a request or notification (Method),
// or a response (Result or Error).
type acpMessage struct {
	ID     *json.RawMessage `json:"id,omitempty"`
	Method string           `json:"method,omitempty"`
	Params json.RawMessage  `json:"params,omitempty"`
	Result json.RawMessage  `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (a *acpConn) session(root string) error {
	if _, err := a.call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}}}); err != nil {
		return err
	}
	newSession := map[string]any{"cwd": root, "mcpServers": []any{}}
	res, err := a.call("session/new", newSession)
	if err != nil && strings.Contains(err.Error(), "Authentication required") {
		if _, err := a.call("authenticate", map[string]any{"methodId": "gemini-api-key"}); err != nil {
			return err
		}
		res, err = a.call("session/new", newSession)
	}
	if err != nil {
		return err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
		return fmt.Errorf("session/new answered %s", res)
	}
	_, err = a.call("session/prompt", map[string]any{"sessionId": s.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": userPrompt}}})
	return err
}

// call sends a request and reads messages until its response, answering
// the client's own requests meanwhile.
func (a *acpConn) call(method string, params any) (json.RawMessage, error) {
	a.id++
	id := a.id
	if err := a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		var line string
		select {
		case <-a.ctx.Done():
			return nil, fmt.Errorf("acp %s: %w", method, a.ctx.Err())
		case l, ok := <-a.lines:
			if !ok {
				return nil, fmt.Errorf("acp %s: the client closed its output", method)
			}
			line = l
		}
		a.transcript.WriteString(line + "\n")
		var m acpMessage
		if json.Unmarshal([]byte(line), &m) != nil {
			continue // a line that is no message (a log line)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			if err := a.answer(m); err != nil {
				return nil, err
			}
		case m.Method != "":
			// A notification (session/update): kept in the transcript.
		case m.ID != nil && string(*m.ID) == fmt.Sprint(id):
			if m.Error != nil {
				return nil, fmt.Errorf("acp %s: %d %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		}
	}
}

// answer grants a permission the client asks for, and refuses anything
// else it asks of the IDE.
func (a *acpConn) answer(m acpMessage) error {
	if m.Method != "session/request_permission" {
		return a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not supported by the e2e client"}})
	}
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = json.Unmarshal(m.Params, &p)
	for _, o := range p.Options {
		if strings.HasPrefix(o.Kind, "allow") {
			return a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID,
				"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}})
		}
	}
	return errors.New("acp: a permission request with no allow option: " + string(m.Params))
}

func (a *acpConn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = a.in.Write(append(b, '\n'))
	return err
}
