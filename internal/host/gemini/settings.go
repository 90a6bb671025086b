package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// settings are what Gemini CLI's merged settings change of an agent
// without touching its definition: agents.overrides.<name>.
type settings struct {
	overrides map[string]override
}

// override is one agent's agents.overrides, as the layers merge it.
type override struct {
	// model is modelConfig.model of the last layer that sets it, and
	// file that layer's file.
	model, file string
	// servers are the MCP servers any layer adds (mcpServers).
	servers []string
}

func (s settings) override(name string) override { return s.overrides[name] }

// settingsFiles are Gemini CLI's settings files in the order it merges
// them, lowest first (read in its settings loader): the system defaults,
// the user's, the project's, the system settings, which win.
func settingsFiles(env host.Env, project string) []string {
	getenv := func(k string) string {
		if env.Getenv == nil {
			return ""
		}
		return env.Getenv(k)
	}
	etc := filepath.Join(env.Root, string(filepath.Separator), "etc", "gemini-cli")
	files := []string{firstOf(getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"), filepath.Join(etc, "system-defaults.json"))}
	if home := geminiHome(env); home != "" {
		files = append(files, filepath.Join(home, ".gemini", "settings.json"))
	}
	files = append(files, filepath.Join(project, ".gemini", "settings.json"))
	return append(files, firstOf(getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"), filepath.Join(etc, "settings.json")))
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readSettings reads the overrides of every settings file (JSON with
// comments, as Gemini CLI reads it). A file that exists and cannot be
// read is an error: the model it may set is not known.
func readSettings(ctx context.Context, env host.Env, project string) (settings, error) {
	s := settings{overrides: map[string]override{}}
	for _, file := range settingsFiles(env, project) {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		data, err := document.ReadFile(file, env.Limits.MaxBytes)
		if err != nil {
			return s, err
		}
		var tree struct {
			Agents struct {
				Overrides map[string]struct {
					ModelConfig struct {
						Model any `json:"model"`
					} `json:"modelConfig"`
					MCPServers map[string]any `json:"mcpServers"`
				} `json:"overrides"`
			} `json:"agents"`
		}
		dec := json.NewDecoder(bytes.NewReader(doctor.StripJSONC(data)))
		if err := dec.Decode(&tree); err != nil {
			return s, &document.Error{Source: file, Msg: "Gemini CLI's settings cannot be read, so what they change of an agent is not known: " + document.OneLine(err.Error())}
		}
		for name, o := range tree.Agents.Overrides {
			cur := s.overrides[name]
			switch m := o.ModelConfig.Model.(type) {
			case nil:
			case string:
				cur.model, cur.file = m, file
			default:
				return s, &document.Error{Source: file, Pointer: "/agents/overrides/" + name + "/modelConfig/model", Msg: "the model is not a string"}
			}
			for server := range o.MCPServers {
				cur.servers = append(cur.servers, server)
			}
			sort.Strings(cur.servers)
			s.overrides[name] = cur
		}
	}
	return s, nil
}
