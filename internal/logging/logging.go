// Package logging writes Cairn's log in the structured shape of mongod's
// JSON log lines — {"t":{"$date":…},"s":"I","c":"NETWORK","id":…,"ctx":…,
// "msg":…,"attr":{…}} — so that tools and habits built for mongod's log
// carry over. It is a log/slog handler; a ring of recent lines serves getLog.
package logging

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Reserved attribute keys that fill the line's own fields instead of attr.
const (
	KeyComponent = "c"   // component: NETWORK, COMMAND, STORAGE, CONTROL, QUERY ...
	KeyID        = "id"  // numeric message id
	KeyCtx       = "ctx" // context: "conn12", "listener", "initandlisten"
)

// Handler is a slog.Handler writing mongod-style JSON lines.
type Handler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	attrs []slog.Attr
	ring  *Ring
}

// NewHandler writes lines at or above level to w and remembers the last
// lines in ring (may be nil).
func NewHandler(w io.Writer, level slog.Leveler, ring *Ring) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level, ring: ring}
}

// SetOutput replaces the destination (log rotation) and returns the old
// one, for the caller to close.
func (h *Handler) SetOutput(w io.Writer) io.Writer {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.w
	h.w = w
	return old
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &n
}

// WithGroup implements slog.Handler (groups are flattened into attr).
func (h *Handler) WithGroup(string) slog.Handler { return h }

func severity(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "E"
	case l >= slog.LevelWarn:
		return "W"
	case l >= slog.LevelInfo:
		return "I"
	}
	return "D1"
}

// Handle implements slog.Handler.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"t":{"$date":"`...)
	buf = t.AppendFormat(buf, "2006-01-02T15:04:05.000-07:00")
	sev := severity(r.Level)
	buf = append(buf, `"},"s":"`...)
	buf = append(buf, sev...)
	comp, id, ctx := "-", int64(0), "-"
	var attrs []slog.Attr
	collect := func(a slog.Attr) bool {
		switch a.Key {
		case KeyComponent:
			comp = a.Value.String()
		case KeyID:
			id = a.Value.Int64()
		case KeyCtx:
			ctx = a.Value.String()
		default:
			attrs = append(attrs, a)
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)
	// mongod aligns the first fields with spaces after their commas, never
	// inside the values: "s":"I",  "c":"NETWORK",  "id":22943,   "ctx":…
	buf = append(buf, `",`...)
	buf = pad(buf, 3-len(sev))
	buf = append(buf, `"c":`...)
	buf = strconv.AppendQuote(buf, comp)
	buf = append(buf, ',')
	buf = pad(buf, 9-len(comp))
	buf = append(buf, `"id":`...)
	n := len(buf)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, ',')
	buf = pad(buf, 8-(len(buf)-1-n))
	buf = append(buf, `"ctx":`...)
	buf = appendJSON(buf, ctx)
	buf = append(buf, `,"msg":`...)
	buf = appendJSON(buf, r.Message)
	if len(attrs) > 0 {
		buf = append(buf, `,"attr":{`...)
		for i, a := range attrs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSON(buf, a.Key)
			buf = append(buf, ':')
			buf = appendJSON(buf, attrValue(a.Value))
		}
		buf = append(buf, '}')
	}
	buf = append(buf, '}', '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ring != nil {
		h.ring.add(string(buf[:len(buf)-1]))
	}
	_, err := h.w.Write(buf)
	return err
}

// pad appends n spaces (none if n < 1).
func pad(buf []byte, n int) []byte {
	for ; n > 0; n-- {
		buf = append(buf, ' ')
	}
	return buf
}

func attrValue(v slog.Value) any {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().Milliseconds()
	case slog.KindTime:
		return map[string]string{"$date": v.Time().Format(time.RFC3339Nano)}
	case slog.KindGroup:
		m := map[string]any{}
		for _, a := range v.Group() {
			m[a.Key] = attrValue(a.Value)
		}
		return m
	}
	if err, ok := v.Any().(error); ok {
		return err.Error()
	}
	return v.Any()
}

func appendJSON(buf []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return strconv.AppendQuote(buf, err.Error())
	}
	return append(buf, b...)
}

// Ring keeps the most recent log lines for getLog.
type Ring struct {
	mu    sync.Mutex
	lines []string
	next  int
	total int
}

// NewRing keeps up to n lines.
func NewRing(n int) *Ring { return &Ring{lines: make([]string, 0, n)} }

func (r *Ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if len(r.lines) < cap(r.lines) {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
}

// Lines returns the kept lines, oldest first, and how many were written.
func (r *Ring) Lines() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	out = append(out, r.lines[:r.next]...)
	return out, r.total
}
