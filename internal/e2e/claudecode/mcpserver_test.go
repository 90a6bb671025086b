package claudecode

import (
	"bufio"
	"encoding/json"
	"os"
)

// envMCPServer makes the test binary a tiny MCP server on stdio (the
// scenario that asks whether a definition's mcpServers start), appending
// one line per message it gets to the file the variable names.
const envMCPServer = "SPAWNGATE_E2E_MCP_SERVER"

// mcpToolName is the one tool the server offers.
const mcpToolName = "e2e_probe"

// serveMCP answers MCP's JSON-RPC on stdin/stdout until stdin closes.
func serveMCP(logPath string) int {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	defer logf.Close()
	_, _ = logf.WriteString("started\n")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		_, _ = logf.WriteString(msg.Method + "\n")
		if len(msg.ID) == 0 {
			continue // a notification
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			v := msg.Params.ProtocolVersion
			if v == "" {
				v = "2025-06-18"
			}
			reply["result"] = map[string]any{
				"protocolVersion": v,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "e2e", "version": "1"},
			}
		case "tools/list":
			reply["result"] = map[string]any{"tools": []any{map[string]any{
				"name": mcpToolName, "description": "A probe tool for the e2e suite.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			}}}
		case "ping":
			reply["result"] = map[string]any{}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "not implemented"}
		}
		if out.Encode(reply) != nil {
			return 1
		}
	}
	return 0
}
