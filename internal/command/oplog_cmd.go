package command

import (
	"strconv"
	"time"

	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
)

// replSetResizeOplog changes the oplog's size (MB) and minimum retention
// (hours), as mongod 7.0: the size is kept in local.oplog.rs's options
// (durably, so it survives restarts, as mongod's), the retention for the
// running process; the log shrinks from its oldest end as writes go on.
func replSetResizeOplog(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("size", "minRetentionHours"); err != nil {
		return err
	}
	number := func(field string) (float64, bool, error) {
		v, ok := a.Lookup(field)
		if !ok {
			return 0, false, nil
		}
		f, isNum := v.AsFloat64()
		if !v.IsNumber() || !isNum {
			return 0, false, a.WrongTypes(field, v, "long, int, decimal, double")
		}
		return f, true, nil
	}
	sizeMB, hasSize, err := number("size")
	if err != nil {
		return err
	}
	hours, hasHours, err := number("minRetentionHours")
	if err != nil {
		return err
	}
	// The IDL validators' errors (Location51024).
	if hasSize && sizeMB < oplog.MinResizeMB {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'size' value must be >= %d, actual value '%s'", oplog.MinResizeMB, formatNumber(sizeMB))
	}
	if hasSize && sizeMB > oplog.MaxResizeMB {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'size' value must be <= %d, actual value '%s'", oplog.MaxResizeMB, formatNumber(sizeMB))
	}
	if hasHours && hours < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'minRetentionHours' value must be >= 0, actual value '%s'", formatNumber(hours))
	}
	l := c.Env.Oplog
	if l == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "oplog does not exist")
	}
	if !hasSize && !hasHours {
		return mongoerr.New(mongoerr.InvalidOptions, "replSetResizeOplog command must specify at least one of 'size' or 'minRetentionHours'")
	}
	var bytes int64
	if hasSize {
		bytes = int64(sizeMB * oplog.MB)
		if err := c.WriteTx(exec.Sync, func(tx *exec.Tx) error { return l.SaveSize(tx, bytes) }); err != nil {
			return err
		}
	}
	var ret *time.Duration
	if hasHours {
		d := time.Duration(hours * float64(time.Hour))
		ret = &d
	}
	l.SetLimits(bytes, ret)
	if c.Env.Log != nil {
		c.Env.Log.Info("replSetResizeOplog success", "c", "STORAGE", "id", 20322, "size", l.Size(), "minRetentionHours", l.MinRetention().Hours())
	}
	return nil
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
