package plan

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// Stdin is the source name of a document read from standard input.
const Stdin = "<stdin>"

// ReadFile reads the document at path. A missing, unreadable or directory
// path, and a document over max bytes, is an *Error.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Source: path, Msg: "cannot read: " + reason(err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &Error{Source: path, Msg: "cannot read: " + reason(err)}
	}
	if info.IsDir() {
		return nil, &Error{Source: path, Msg: "is a directory, not a document"}
	}
	return Read(f, path, max)
}

// Read reads a whole document from r, refusing more than max bytes without
// reading much past the limit.
func Read(r io.Reader, source string, max int64) ([]byte, error) {
	limit := max
	if limit < math.MaxInt64 {
		limit++ // one byte past the limit tells a document over it
	}
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, &Error{Source: source, Msg: "cannot read: " + reason(err)}
	}
	if int64(len(data)) > max {
		return nil, tooLarge(source, max)
	}
	return data, nil
}

func tooLarge(source string, max int64) *Error {
	return &Error{Source: source, Msg: fmt.Sprintf("document is larger than %d bytes (limit --max-bytes)", max)}
}

// reason is the part of an I/O error worth showing: the path is already in
// the message.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
