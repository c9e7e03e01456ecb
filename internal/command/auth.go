package command

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Authentication commands: saslStart and saslContinue (SCRAM-SHA-1 and
// SCRAM-SHA-256), hello's saslSupportedMechs and speculativeAuthenticate,
// logout and connectionStatus.

// authManager returns the server's access control, or an error when the
// server has none (a bare Env in tests).
func authManager(c *Ctx) (*auth.Manager, error) {
	if c.Env.Auth == nil || c.Conn == nil {
		return nil, mongoerr.New(mongoerr.CommandNotSupported, "access control is not available on this server")
	}
	return c.Env.Auth, nil
}

// saslPayload reads a SASL payload: binary data (or a string, which some
// shells send).
func saslPayload(a args, field string) ([]byte, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.%s' is missing but a required field", a.Cmd, field)
	}
	switch v.Type {
	case bson.TypeBinary:
		_, data := v.Binary()
		return data, nil
	case bson.TypeString:
		return []byte(v.StringValue()), nil
	}
	return nil, a.WrongTypes(field, v, "string, binData")
}

func appendSASLStep(r *bson.Builder, st auth.SASLStep) {
	r.AppendInt32("conversationId", st.ConversationID)
	r.AppendBool("done", st.Done)
	r.AppendBinary("payload", 0, st.Payload)
}

// startSASL parses a saslStart document (the command, or hello's
// speculativeAuthenticate) and runs the first step.
func startSASL(c *Ctx, m *auth.Manager, a args, db string) (auth.SASLStep, error) {
	mech, ok, err := a.Str("mechanism")
	if err != nil {
		return auth.SASLStep{}, err
	}
	if !ok {
		return auth.SASLStep{}, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'saslStart.mechanism' is missing but a required field")
	}
	payload, err := saslPayload(a, "payload")
	if err != nil {
		return auth.SASLStep{}, err
	}
	skipEmpty := false
	if opts, ok, err := a.Doc("options"); err != nil {
		return auth.SASLStep{}, err
	} else if ok {
		if v, ok := opts.Lookup("skipEmptyExchange"); ok {
			skipEmpty = v.Truthy()
		}
	}
	return c.Conn.Session().Start(c, m, mech, db, payload, skipEmpty)
}

func saslStart(c *Ctx) error {
	m, err := authManager(c)
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.Check("mechanism", "payload", "autoAuthorize", "options"); err != nil {
		return err
	}
	st, err := startSASL(c, m, a, c.DB)
	if err != nil {
		return err
	}
	appendSASLStep(c.Reply, st)
	return nil
}

func saslContinue(c *Ctx) error {
	m, err := authManager(c)
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.Check("conversationId", "payload"); err != nil {
		return err
	}
	id, ok, err := a.Integer("conversationId")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'saslContinue.conversationId' is missing but a required field")
	}
	payload, err := saslPayload(a, "payload")
	if err != nil {
		return err
	}
	st, err := c.Conn.Session().Continue(c, m, int32(id), payload)
	if err != nil {
		return err
	}
	appendSASLStep(c.Reply, st)
	return nil
}

// helloAuth adds hello's authentication answers: saslSupportedMechs for
// "db.user", and the first SASL step of speculativeAuthenticate (omitted
// when it fails: the client then authenticates normally and gets the
// error).
func helloAuth(c *Ctx, a args) error {
	m := c.Env.Auth
	if m == nil || c.Conn == nil {
		return nil
	}
	if name, ok, err := a.Str("saslSupportedMechs"); err != nil {
		return err
	} else if ok {
		db, user, found := strings.Cut(name, ".")
		if !found {
			return mongoerr.New(mongoerr.BadValue, "UserName must contain a '.' separated database.user pair")
		}
		u, err := m.Lookup(db, user)
		if err != nil {
			return err
		}
		if u != nil {
			r := c.Reply
			r.StartArray("saslSupportedMechs")
			for i, mech := range u.Mechanisms() {
				r.AppendString(bson.Index(i), mech)
			}
			r.End()
		}
	}
	spec, ok, err := a.Doc("speculativeAuthenticate")
	if err != nil || !ok {
		return err
	}
	if _, ok := spec.Lookup("saslStart"); !ok {
		return nil // MONGODB-X509's authenticate: not supported, not answered
	}
	sa := args{Cmd: "saslStart", Body: spec}
	db := "admin"
	if v, ok := spec.Lookup("db"); ok && v.Type == bson.TypeString {
		db = v.StringValue()
	}
	st, err := startSASL(c, m, sa, db)
	if err != nil {
		return nil // logged by the session; hello itself succeeds
	}
	c.Reply.StartDocument("speculativeAuthenticate")
	appendSASLStep(c.Reply, st)
	c.Reply.End()
	return nil
}

// logout ends the connection's authentication on the request's database.
func logout(c *Ctx) error {
	if c.Conn != nil {
		c.Conn.Session().Logout(c.DB)
	}
	return nil
}

func connectionStatus(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("showPrivileges"); err != nil {
		return err
	}
	showPrivs, _, err := a.Boolean("showPrivileges")
	if err != nil {
		return err
	}
	var s *auth.Session
	if c.Conn != nil && c.Env.Auth != nil {
		s = c.Conn.Session()
	}
	return c.Env.Auth.AppendConnectionStatus(c.Reply, s, showPrivs)
}
