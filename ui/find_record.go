package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/keytemplate"
	"github.com/idemctl/idemctl/inspect/lookup"
	"github.com/idemctl/idemctl/internal/safefile"
	"github.com/idemctl/idemctl/ui/common"
)

// findHelp is :find's usage, in the flags 'idemctl find' takes, so what
// the library needs reads the same in both.
const findHelp = ":find KEY|FILE [--principal P] [--method M --path P] [--capture N=V] [--request FILE] [--event FILE] [--function F] [--keyspace NAME]"

// recordFinder is :find: a request's record found the way its library
// keys it, from what the ticket holds (a key and its captures, or a
// request or event file), opened on the Detail screen with the verdict
// (the same request, or a different one under its key). It is
// 'idemctl find' on the session's server or snapshot.
type recordFinder struct {
	*shared
}

// foundMsg is what :find found: the record (nil: none under the key),
// the derivation and the verdict, or a one-line error.
type foundMsg struct {
	ks      *inspect.Keyspace
	rec     *inspect.Record
	d       *lookup.Derivation
	verdict lookup.Verdict
	err     error
}

// findArgs is the line :find was given.
type findArgs struct {
	in       lookup.Inputs
	keyspace string
	word     string // the bare word: a key, or a request/event file
	request  string
	event    string
}

// Start parses the line and returns the read; a line it cannot use is
// said on the status line.
func (f *recordFinder) Start(line string) tea.Cmd {
	if strings.TrimSpace(line) == "" {
		f.Status = "usage: " + findHelp
		return nil
	}
	args, err := parseFindLine(line)
	if err != nil {
		f.Status = ":find: " + inspect.Sanitize(err.Error()) + " — " + findHelp
		return nil
	}
	kss, err := f.keyspacesFor(args.keyspace)
	if err != nil {
		f.Status = ":find: " + err.Error()
		return nil
	}
	ctx, opts := f.Ctx, f.Opts
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return findIn(ctx, opts, kss, args)
	}
}

func parseFindLine(line string) (findArgs, error) {
	var a findArgs
	a.in.Captures = map[string]string{}
	var principal, method, path string
	var captures []string
	fs := pflag.NewFlagSet("find", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // :find says what is wrong in one line
	fs.StringVar(&a.in.Key, "key", "", "")
	fs.StringVar(&principal, "principal", "", "")
	fs.StringVar(&method, "method", "", "")
	fs.StringVar(&path, "path", "", "")
	fs.StringArrayVar(&captures, "capture", nil, "")
	fs.StringVar(&a.request, "request", "", "")
	fs.StringVar(&a.event, "event", "", "")
	fs.StringVar(&a.in.Function, "function", "", "")
	fs.StringVar(&a.keyspace, "keyspace", "", "")
	if err := fs.Parse(strings.Fields(line)); err != nil {
		return a, err
	}
	for name, v := range map[string]string{"principal": principal, "method": method, "path": path} {
		if v != "" {
			a.in.Captures[name] = v
		}
	}
	for _, w := range fs.Args() {
		name, v, ok := strings.Cut(w, "=")
		switch {
		case ok && keytemplate.ValidName(name):
			a.in.Captures[name] = v // NAME=VALUE, as --capture
		case a.word == "":
			a.word = w
		default:
			return a, fmt.Errorf("%q: one key or file at most", w)
		}
	}
	for _, c := range captures {
		name, v, ok := strings.Cut(c, "=")
		if !ok || !keytemplate.ValidName(name) {
			return a, fmt.Errorf("--capture %q: want NAME=VALUE", c)
		}
		a.in.Captures[name] = v
	}
	return a, nil
}

// keyspacesFor is the keyspace named, or every keyspace of the session
// (findIn keeps those whose library can derive from the inputs).
func (f *recordFinder) keyspacesFor(name string) ([]*inspect.Keyspace, error) {
	if name == "" {
		return f.Opts.Keyspaces, nil
	}
	var names []string
	for _, ks := range f.Opts.Keyspaces {
		if ks.Name == name {
			return []*inspect.Keyspace{ks}, nil
		}
		names = append(names, ks.Name)
	}
	return nil, fmt.Errorf("no keyspace %s in this session (%s)", inspect.Sanitize(name), strings.Join(names, ", "))
}

// findIn derives the record's key in each keyspace that can, reads it,
// and judges the request against what was found: the first keyspace
// holding a record wins; none, the first one's "not found".
func findIn(ctx context.Context, opts Options, kss []*inspect.Keyspace, args findArgs) foundMsg {
	var first *foundMsg
	var needErr error
	for _, ks := range kss {
		in, err := inputsFor(opts, ks, args)
		if err != nil {
			return foundMsg{err: err}
		}
		d, err := lookup.Derive(ks, in)
		if err != nil {
			if needErr == nil {
				needErr = err
			}
			continue
		}
		res := readFound(ctx, opts, ks, d)
		if res.err != nil || res.rec != nil {
			return res
		}
		if first == nil {
			first = &res
		}
	}
	if first != nil {
		return *first
	}
	if needErr == nil {
		needErr = errors.New("no keyspace in this session")
	}
	return foundMsg{err: needErr}
}

// inputsFor is the inputs in ks's terms: the bare word read as a file
// when one exists at that path (an event for Powertools, else a request),
// else as the key; and the keyspace's library settings.
func inputsFor(opts Options, ks *inspect.Keyspace, args findArgs) (lookup.Inputs, error) {
	in := args.in
	request, event := args.request, args.event
	if w := args.word; w != "" {
		if st, err := os.Stat(w); err == nil && st.Mode().IsRegular() {
			if strings.HasPrefix(lookup.LibraryOf(ks), "powertools") {
				event = w
			} else {
				request = w
			}
		} else if in.Key == "" {
			in.Key = w
		}
	}
	if err := readFindFiles(&in, request, event); err != nil {
		return in, err
	}
	if in.Key == "" && in.Request == nil && in.Event == nil && len(in.Captures) == 0 {
		return in, errors.New("nothing to find: give a key, or a request or event file — " + findHelp)
	}
	if opts.FindSettings != nil {
		if err := opts.FindSettings(ks.Name, &in); err != nil {
			return in, err
		}
	}
	return in, nil
}

func readFindFiles(in *lookup.Inputs, request, event string) error {
	if request != "" {
		data, err := safefile.Read(request, 8<<20)
		if err != nil {
			return fmt.Errorf("--request %s: %v", request, err)
		}
		if in.Request, err = lookup.ParseRequest(data); err != nil {
			return fmt.Errorf("--request %s: %v", request, err)
		}
	}
	if event != "" {
		data, err := safefile.Read(event, 8<<20)
		if err != nil {
			return fmt.Errorf("--event %s: %v", event, err)
		}
		ev, err := lookup.ParseJSON(data)
		if err != nil {
			return fmt.Errorf("--event %s: not JSON: %v", event, err)
		}
		in.Event = &ev
	}
	return nil
}

// readFound reads the record under the derived key and judges the
// request against it, as 'idemctl find' does.
func readFound(ctx context.Context, opts Options, ks *inspect.Keyspace, d *lookup.Derivation) foundMsg {
	rec, verdict, err := lookup.Find(ctx, opts.Client, ks, d, opts.Scan)
	if err != nil {
		return foundMsg{err: fmt.Errorf("reading %s: %w", d.Key, err)}
	}
	return foundMsg{ks: ks, rec: rec, d: d, verdict: verdict}
}

// found takes the answer: the record opens on detail with the verdict
// (open is true: the root shows the Detail screen); none, or an error,
// is said on the status line.
func (f *recordFinder) found(msg foundMsg, detail *detailScreen) (cmd tea.Cmd, open bool) {
	switch {
	case msg.err != nil:
		f.Status = ":find: " + inspect.Sanitize(msg.err.Error())
		return nil, false
	case msg.rec == nil:
		f.Status = fmt.Sprintf(":find %s: %s", inspect.Sanitize(msg.d.Key), msg.verdict.Line)
		return nil, false
	}
	f.Status = ""
	cmd = detail.Open(msg.rec)
	detail.cur.found = &foundNote{library: msg.d.Library, inputs: msg.d.InputNames(), verdict: msg.verdict}
	detail.render()
	return cmd, true
}

// foundNote is how :find came to a record, drawn at the detail's top.
type foundNote struct {
	library, inputs string
	verdict         lookup.Verdict
}

// verdictStyle draws a different request as an error (no repair on Redis
// helps it) and the same one as fine.
func verdictStyle(s common.Styles, kind string) lipgloss.Style {
	switch kind {
	case lookup.Same:
		return s.OK
	case lookup.Different:
		return s.Error
	}
	return s.Bold
}
