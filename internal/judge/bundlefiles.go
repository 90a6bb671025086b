package judge

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"

	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader/filter"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/spawngate/spawngate/internal/document"
)

// A bundle is read in at most two streaming passes, each bounded by one
// budget of decompressed bytes, before OPA's reader sees any of it:
//
//   - the first pass holds nothing but .signatures.json. With a key, it
//     verifies the signature where the file is found and stops there;
//     without one, it refuses the bundle there. A wrong signature, a
//     signature no key checks, or no signature where a key is given is
//     refused having held no other file;
//   - the second pass holds the files: with a key, it refuses a file the
//     signature does not list before reading it, and a file whose digest
//     differs as soon as it is read;
//   - OPA's reader then reads the files held in memory (and verifies them
//     again): no Rego is parsed before the signature and every digest hold.
//
// OPA's own tarball loader would decompress the whole archive into memory
// before any of this, whatever its size.

// heldFile is one regular file of a bundle, held in memory.
type heldFile struct {
	path string // as OPA's loaders name it: "/checks/x.rego"
	url  string
	data []byte
}

// errStop ends a pass early: it found what it was looking for.
var errStop = errors.New("stop")

// bundleSource walks the regular files of a bundle, in its order.
type bundleSource interface {
	// each calls fn with every regular file. fn may read r, which holds
	// size bytes, or leave it. A read past the budget fails; each returns
	// fn's first error.
	each(ctx context.Context, b *budget, fn func(path, url string, size int64, r io.Reader) error) error
}

// budget is what may still be decompressed of one bundle, in one pass.
type budget struct {
	name string // the bundle, as given
	max  int64
	used int64
}

func newBudget(name string, max int64) *budget { return &budget{name: name, max: max} }

// over is the error of a bundle that holds more than the budget.
// where says where in the bundle: "at checks/x.rego".
func (b *budget) over(where string) error {
	return &document.Error{Source: b.name, Msg: fmt.Sprintf("holds more than %d bytes (%s): a bundle, all its files together and decompressed, is held to the size of one document", b.max, where), Limit: "max-bytes"}
}

// fits tells whether n more bytes fit the budget.
func (b *budget) fits(n int64) bool { return n >= 0 && n <= b.max-b.used }

// errOverBudget is the read error of a stream that went past its budget.
var errOverBudget = errors.New("over the budget")

// budgetReader counts what is read through it against the budget, and
// fails once past it: nothing past the budget is decompressed.
type budgetReader struct {
	r io.Reader
	b *budget
}

func (br *budgetReader) Read(p []byte) (int, error) {
	left := br.b.max - br.b.used
	if left == 0 {
		// At the budget: the stream may end here, or go on past it.
		var one [1]byte
		n, err := br.r.Read(one[:])
		if n > 0 {
			return 0, errOverBudget
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := br.r.Read(p)
	br.b.used += int64(n)
	return n, err
}

// tarball is a .tar.gz bundle, read from memory. Every decompressed byte,
// tar headers and skipped entries included, counts against the budget.
type tarball struct{ raw []byte }

func (t tarball) each(ctx context.Context, b *budget, fn func(path, url string, size int64, r io.Reader) error) error {
	gz, err := gzip.NewReader(bytes.NewReader(t.raw))
	if err != nil {
		return readFailed(b.name, fmt.Errorf("archive read failed: %w", err))
	}
	tr := tar.NewReader(&budgetReader{r: gz, b: b})
	where := "at its start"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errOverBudget):
			return b.over(where)
		case err != nil:
			return readFailed(b.name, err)
		}
		// Only regular files, as OPA's tarball loader takes them: the
		// names it gives them (the header's, untouched) are kept.
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel := strings.TrimPrefix(h.Name, "/")
		where = "after " + rel
		if !b.fits(h.Size) {
			return b.over("at " + rel)
		}
		if err := fn(h.Name, filepath.Join(h.Name), h.Size, tr); err != nil {
			if errors.Is(err, errOverBudget) {
				return b.over("at " + rel)
			}
			return err
		}
	}
}

// folder is a bundle laid out as a folder, walked by OPA's own loader so
// that every file is named as OPA names it. The budget counts the sizes of
// its files, before each is read.
type folder struct{ root string }

func (f folder) each(ctx context.Context, b *budget, fn func(path, url string, size int64, r io.Reader) error) error {
	l := bundle.NewDirectoryLoader(f.root)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := l.NextFile()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return readFailed(b.name, err)
		}
		err = f.file(b, d, fn)
		d.Close()
		if err != nil {
			return err
		}
	}
}

func (f folder) file(b *budget, d *bundle.Descriptor, fn func(path, url string, size int64, r io.Reader) error) error {
	// OPA's loader names the file it walked by its URL: it is read here,
	// with the size it has when opened.
	file, err := os.Open(d.URL())
	if err != nil {
		return readFailed(b.name, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return readFailed(b.name, err)
	}
	if !b.fits(info.Size()) {
		return b.over("at " + strings.TrimPrefix(d.Path(), "/"))
	}
	b.used += info.Size()
	return fn(d.Path(), d.URL(), info.Size(), io.LimitReader(file, info.Size()))
}

func readFailed(name string, err error) error {
	return &document.Error{Source: name, Msg: "cannot be read as a bundle (a .tar.gz file from opa build, or a folder): " + document.Reason(err)}
}

// holdFile reads one file whole: size bytes, no more.
func holdFile(path, url string, size int64, r io.Reader) (heldFile, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%s: shorter than its size", strings.TrimPrefix(path, "/"))
		}
		return heldFile{}, err
	}
	return heldFile{path: path, url: url, data: data}, nil
}

// readBundleFiles reads the files of a bundle into memory, no more than
// maxBytes of them in all, verifying its signature with verify, or
// refusing a signature when verify is nil, before it holds any other file
// (see the comment at the top of this file).
func readBundleFiles(ctx context.Context, name string, src bundleSource, maxBytes int64, verify *bundle.VerificationConfig) ([]heldFile, error) {
	fail := func(format string, args ...any) error {
		return &document.Error{Source: name, Msg: document.OneLine(fmt.Sprintf(format, args...))}
	}

	// The first pass: the signature, and nothing else.
	var signed map[string]bundle.FileInfo
	err := src.each(ctx, newBudget(name, maxBytes), func(path, url string, size int64, r io.Reader) error {
		if !bundle.IsSignaturesFile(path) {
			return nil
		}
		if verify == nil {
			return fail("is signed (it holds .signatures.json), and no verification key is given: a signature that is not checked proves nothing; give the public key (or the HMAC secret) it was signed with")
		}
		f, err := holdFile(path, url, size, r)
		if err != nil {
			return err
		}
		var sc bundle.SignaturesConfig
		if err := util.UnmarshalJSON(f.data, &sc); err != nil {
			return fail("the signature does not verify with the key given: %s: %v", strings.TrimPrefix(path, "/"), err)
		}
		if signed, err = bundle.VerifyBundleSignature(sc, verify); err != nil {
			return fail("the signature does not verify with the key given: %v", err)
		}
		return errStop
	})
	switch {
	case errors.Is(err, errStop):
	case err != nil:
		return nil, asReadError(name, err)
	case verify != nil:
		return nil, fail("is not signed (it holds no .signatures.json), and a verification key is given: only a bundle signed with that key is read")
	}

	// The second pass: every file, each verified as it is read.
	var files []heldFile
	sigFiles := 0
	err = src.each(ctx, newBudget(name, maxBytes), func(path, url string, size int64, r io.Reader) error {
		rel := strings.TrimPrefix(path, "/")
		switch {
		case verify == nil:
		case bundle.IsSignaturesFile(path):
			if sigFiles++; sigFiles > 1 {
				return fail("holds more than one .signatures.json (%s is another): which one was meant to be checked is unclear", rel)
			}
		default:
			if _, ok := signed[rel]; !ok {
				return fail("the signature does not verify with the key given: file %s is not listed in the signature", rel)
			}
		}
		f, err := holdFile(path, url, size, r)
		if err != nil {
			return err
		}
		if verify != nil && !bundle.IsSignaturesFile(path) {
			if err := bundle.VerifyBundleFile(rel, *bytes.NewBuffer(f.data), signed); err != nil {
				return fail("the signature does not verify with the key given: %v", err)
			}
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, asReadError(name, err)
	}
	if len(signed) > 0 {
		missing := make([]string, 0, len(signed))
		for p := range signed {
			missing = append(missing, p)
		}
		sort.Strings(missing)
		return nil, fail("the signature does not verify with the key given: it lists %s, which the bundle does not hold", strings.Join(missing, ", "))
	}
	return files, nil
}

// asReadError keeps the errors of this file as they are and says any
// other reading error as one about the bundle.
func asReadError(name string, err error) error {
	var pe *document.Error
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return readFailed(name, err)
}

// heldLoader hands the files read to OPA's bundle reader.
type heldLoader struct {
	files []heldFile
	next  int
}

var _ bundle.DirectoryLoader = (*heldLoader)(nil)

func (h *heldLoader) NextFile() (*bundle.Descriptor, error) {
	if h.next >= len(h.files) {
		return nil, io.EOF
	}
	f := h.files[h.next]
	h.next++
	return bundle.NewDescriptor(f.url, f.path, bytes.NewBuffer(f.data)), nil
}

// The files are held already, and OPA's reader sets none of these.
func (h *heldLoader) WithFilter(filter.LoaderFilter) bundle.DirectoryLoader   { return h }
func (h *heldLoader) WithPathFormat(bundle.PathFormat) bundle.DirectoryLoader { return h }
func (h *heldLoader) WithSizeLimitBytes(int64) bundle.DirectoryLoader         { return h }
func (h *heldLoader) WithFollowSymlinks(bool) bundle.DirectoryLoader          { return h }
