package wire

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strconv"
)

// OP_MSG flag bits. The low 16 bits are "required": a receiver must reject a
// message that sets one it does not know. The high 16 bits are optional.
const (
	FlagChecksumPresent uint32 = 1 << 0
	FlagMoreToCome      uint32 = 1 << 1
	FlagExhaustAllowed  uint32 = 1 << 16

	requiredFlagMask   = 0xffff
	supportedFlagsMask = FlagChecksumPresent | FlagMoreToCome
)

// Section kinds of an OP_MSG.
const (
	sectionBody     byte = 0
	sectionSequence byte = 1
)

// maxDocumentSequences is the number of kind-1 sections MongoDB accepts in
// one OP_MSG.
const maxDocumentSequences = 2

// minDocumentSize is the size of the empty BSON document.
const minDocumentSize = 5

// crcSize is the size of the optional OP_MSG checksum.
const crcSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Msg is a decoded OP_MSG.
type Msg struct {
	Flags     uint32     // FlagChecksumPresent, FlagMoreToCome, FlagExhaustAllowed
	Body      []byte     // the kind-0 section: exactly one BSON document
	Sequences []Sequence // the kind-1 sections, in message order
}

// Sequence is a kind-1 OP_MSG section: a named sequence of BSON documents
// that stands for an array field of the body (e.g. "documents" of insert).
type Sequence struct {
	Identifier string
	Docs       [][]byte
}

// Sequence returns the document sequence with the given identifier, if any.
func (m *Msg) Sequence(identifier string) (*Sequence, bool) {
	for i := range m.Sequences {
		if m.Sequences[i].Identifier == identifier {
			return &m.Sequences[i], true
		}
	}
	return nil, false
}

// parseMsg decodes the OP_MSG in b (a whole message, header included) into
// m, reusing m's slices. On error m is left in an unspecified state.
func parseMsg(m *Msg, b []byte) *ProtocolError {
	data := b[HeaderSize:]
	if len(data) < 4 {
		return newError(CodeFailedToParse, "OP_MSG is too short to hold its flag bits: %d bytes after the header", len(data))
	}
	m.Flags = binary.LittleEndian.Uint32(data)
	m.Body = nil
	m.Sequences = m.Sequences[:0]
	if unknown := m.Flags &^ supportedFlagsMask & requiredFlagMask; unknown != 0 {
		return newError(CodeIllegalOpMsgFlag, "Message contains illegal flags value: Ob%032b", m.Flags)
	}
	sections := data[4:]
	if m.Flags&FlagChecksumPresent != 0 {
		if len(sections) < crcSize {
			return newError(CodeFailedToParse, "OP_MSG has the checksumPresent flag but is too short to hold a checksum")
		}
		n := len(b) - crcSize
		want := binary.LittleEndian.Uint32(b[n:])
		if got := crc32.Checksum(b[:n], castagnoli); got != want {
			return newError(CodeChecksumMismatch, "OP_MSG checksum does not match contents")
		}
		sections = sections[:len(sections)-crcSize]
	}

	haveBody := false
	for len(sections) > 0 {
		kind := sections[0]
		sections = sections[1:]
		switch kind {
		case sectionBody:
			if haveBody {
				return newError(CodeMultipleBodySections, "Multiple body sections in message")
			}
			haveBody = true
			doc, rest, err := readDocument(sections, "OP_MSG body section")
			if err != nil {
				return err
			}
			m.Body, sections = doc, rest
		case sectionSequence:
			rest, err := parseSequence(m, sections)
			if err != nil {
				return err
			}
			sections = rest
		default:
			return newError(CodeUnknownSectionKind, "Unknown section kind %d", kind)
		}
	}
	if !haveBody {
		return newError(CodeMissingBody, "OP_MSG messages must have a body")
	}
	return nil
}

// parseSequence decodes the kind-1 section at the start of b (just after
// its kind byte), appends it to m.Sequences and returns the remaining bytes.
func parseSequence(m *Msg, b []byte) ([]byte, *ProtocolError) {
	if len(m.Sequences) >= maxDocumentSequences {
		return nil, newError(CodeTooManyDocumentSequences, "Too many document sequences in OP_MSG")
	}
	if len(b) < 4 {
		return nil, newError(CodeFailedToParse, "OP_MSG document sequence section is truncated: %d bytes left for its int32 size", len(b))
	}
	size := int64(int32(binary.LittleEndian.Uint32(b)))
	if size < 4 || size > int64(len(b)) {
		return nil, newError(CodeFailedToParse, "OP_MSG document sequence size %d is invalid: %d bytes are left in the message", size, len(b))
	}
	section, rest := b[4:size], b[size:]
	end := bytes.IndexByte(section, 0)
	if end < 0 {
		return nil, newError(CodeFailedToParse, "OP_MSG document sequence identifier is not terminated by a zero byte")
	}
	id := internIdentifier(section[:end])
	for i := range m.Sequences {
		if m.Sequences[i].Identifier == id {
			return nil, newError(CodeDuplicateDocSequence, "Duplicate document sequence: %s", id)
		}
	}

	// Reuse the Docs slice of a previously used Sequence element.
	m.Sequences = slices.Grow(m.Sequences, 1)[:len(m.Sequences)+1]
	seq := &m.Sequences[len(m.Sequences)-1]
	seq.Identifier = id
	seq.Docs = seq.Docs[:0]
	docs := section[end+1:]
	for len(docs) > 0 {
		doc, more, err := readDocument(docs, "OP_MSG document sequence")
		if err != nil {
			err.Msg += " " + strconv.Quote(id)
			return nil, err
		}
		seq.Docs = append(seq.Docs, doc)
		docs = more
	}
	return rest, nil
}

// internIdentifier converts a sequence identifier to a string without
// allocating for the identifiers that commands use.
func internIdentifier(b []byte) string {
	switch string(b) {
	case "documents":
		return "documents"
	case "updates":
		return "updates"
	case "deletes":
		return "deletes"
	case "ops":
		return "ops"
	case "nsInfo":
		return "nsInfo"
	}
	return string(b)
}

// readDocument splits the BSON document at the start of b from the bytes
// that follow it, checking only that its length prefix is consistent with b
// and that it ends with the document terminator. where names the enclosing
// structure for the error message.
func readDocument(b []byte, where string) (doc, rest []byte, perr *ProtocolError) {
	if len(b) < minDocumentSize {
		return nil, nil, newError(CodeInvalidBSON, "%s: truncated document: %d bytes left, a document takes at least %d", where, len(b), minDocumentSize)
	}
	size := int64(int32(binary.LittleEndian.Uint32(b)))
	if size < minDocumentSize || size > int64(len(b)) {
		return nil, nil, newError(CodeInvalidBSON, "%s: document length %d is invalid: %d bytes are left", where, size, len(b))
	}
	if b[size-1] != 0 {
		return nil, nil, newError(CodeInvalidBSON, "%s: document of length %d is not terminated by a zero byte", where, size)
	}
	return b[:size:size], b[size:], nil
}

// AppendMsg appends an OP_MSG with flags and a single kind-0 section holding
// body to dst and returns the extended slice. If flags has
// FlagChecksumPresent, the CRC-32C checksum is appended as well. It does not
// allocate when dst has enough spare capacity.
func AppendMsg(dst []byte, requestID, responseTo int32, flags uint32, body []byte) []byte {
	return AppendMsgSections(dst, requestID, responseTo, flags, body)
}

// AppendMsgSections is like AppendMsg but also appends a kind-1 section for
// each of seqs after the body.
func AppendMsgSections(dst []byte, requestID, responseTo int32, flags uint32, body []byte, seqs ...Sequence) []byte {
	n := HeaderSize + 4 + 1 + len(body)
	for _, s := range seqs {
		n += 1 + 4 + len(s.Identifier) + 1
		for _, d := range s.Docs {
			n += len(d)
		}
	}
	if flags&FlagChecksumPresent != 0 {
		n += crcSize
	}
	dst = slices.Grow(dst, n)

	dst, start := appendHeader(dst, requestID, responseTo, OpMsg)
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	dst = append(dst, sectionBody)
	dst = append(dst, body...)
	for _, s := range seqs {
		dst = append(dst, sectionSequence)
		sizeAt := len(dst)
		dst = binary.LittleEndian.AppendUint32(dst, 0)
		dst = append(dst, s.Identifier...)
		dst = append(dst, 0)
		for _, d := range s.Docs {
			dst = append(dst, d...)
		}
		binary.LittleEndian.PutUint32(dst[sizeAt:], uint32(len(dst)-sizeAt))
	}
	if flags&FlagChecksumPresent != 0 {
		dst = binary.LittleEndian.AppendUint32(dst, 0)
		dst = finishMessage(dst, start)
		n := len(dst) - crcSize
		binary.LittleEndian.PutUint32(dst[n:], crc32.Checksum(dst[start:n], castagnoli))
		return dst
	}
	return finishMessage(dst, start)
}
