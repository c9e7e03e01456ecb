package wire

import "testing"

func TestOpCodeString(t *testing.T) {
	tests := []struct {
		op   OpCode
		want string
	}{
		{OpReply, "OP_REPLY"},
		{OpUpdate, "OP_UPDATE"},
		{OpInsert, "OP_INSERT"},
		{OpQuery, "OP_QUERY"},
		{OpGetMore, "OP_GET_MORE"},
		{OpDelete, "OP_DELETE"},
		{OpKillCursors, "OP_KILL_CURSORS"},
		{OpCompressed, "OP_COMPRESSED"},
		{OpMsg, "OP_MSG"},
		{42, "opcode(42)"},
	}
	for _, tt := range tests {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("OpCode(%d).String() = %q, want %q", int32(tt.op), got, tt.want)
		}
	}
}

func TestCompressorNames(t *testing.T) {
	for _, c := range []Compressor{CompressorSnappy, CompressorZlib, CompressorZstd} {
		got, ok := CompressorByName(c.String())
		if !ok || got != c {
			t.Errorf("CompressorByName(%q) = %v, %v; want %v, true", c.String(), got, ok, c)
		}
	}
	for _, name := range []string{"", "noop", "lz4", "Snappy"} {
		if c, ok := CompressorByName(name); ok {
			t.Errorf("CompressorByName(%q) = %v, true; want false", name, c)
		}
	}
	if got := CompressorNoop.String(); got != "noop" {
		t.Errorf("CompressorNoop.String() = %q", got)
	}
	if got := Compressor(9).String(); got != "compressor(9)" {
		t.Errorf("Compressor(9).String() = %q", got)
	}
}

func TestProtocolErrorFormat(t *testing.T) {
	e := newError(CodeChecksumMismatch, "OP_MSG checksum does not match contents")
	if e.CodeName != "ChecksumMismatch" || e.Fatal {
		t.Errorf("unexpected error fields: %+v", e)
	}
	want := "wire: OP_MSG checksum does not match contents (ChecksumMismatch, code 288)"
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	if got := newError(12345, "x").CodeName; got != "Location12345" {
		t.Errorf("CodeName for an unnamed code = %q", got)
	}
}
