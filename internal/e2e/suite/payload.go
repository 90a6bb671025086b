package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// EnvUpdatePayloads=1 rewrites a suite's payload fixtures from the run
// instead of comparing them.
const EnvUpdatePayloads = "SPAWNGATE_E2E_UPDATE_PAYLOADS"

// MatchPayload compares got, a payload the client sent a hook (already
// anonymised, with its final newline), with the fixture dir/name.json,
// or writes it there under EnvUpdatePayloads=1. The fixtures are the real
// payloads that the adapter's unit tests and docs use.
func MatchPayload(t *testing.T, dir, name, got string) error {
	t.Helper()
	if !json.Valid([]byte(got)) {
		return fmt.Errorf("payload for %s.json is not JSON: %s", name, got)
	}
	path := filepath.Join(dir, name+".json")
	if os.Getenv(EnvUpdatePayloads) == "1" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		t.Logf("writing %s", path)
		return os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%v (%s=1 writes it)", err, EnvUpdatePayloads)
	}
	if !bytes.Equal(want, []byte(got)) {
		return fmt.Errorf("the client's payload is no longer %s (%s=1 rewrites it):\n got %s\nwant %s", path, EnvUpdatePayloads, got, want)
	}
	return nil
}

// JSONKeys are the top-level keys of a JSON object, in their order.
func JSONKeys(s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, fmt.Sprint(tok))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// OrderedJSON is a JSON object of key, value pairs in their order (a Go
// map would sort them; the payloads a client forwards keep the model's).
func OrderedJSON(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
