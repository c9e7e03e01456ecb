package raftrepl

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// raftLogger sends the raft library's lines to the server's log (c: REPL);
// its debug lines are dropped.
type raftLogger struct{ log *slog.Logger }

func (l *raftLogger) line(level slog.Level, format string, v ...any) {
	l.log.Log(context.Background(), level, "raft: "+fmt.Sprintf(format, v...), "c", "REPL")
}

func (l *raftLogger) Debug(v ...any)                   {}
func (l *raftLogger) Debugf(format string, v ...any)   {}
func (l *raftLogger) Info(v ...any)                    { l.line(slog.LevelInfo, "%s", fmt.Sprint(v...)) }
func (l *raftLogger) Infof(format string, v ...any)    { l.line(slog.LevelInfo, format, v...) }
func (l *raftLogger) Warning(v ...any)                 { l.line(slog.LevelWarn, "%s", fmt.Sprint(v...)) }
func (l *raftLogger) Warningf(format string, v ...any) { l.line(slog.LevelWarn, format, v...) }
func (l *raftLogger) Error(v ...any)                   { l.line(slog.LevelError, "%s", fmt.Sprint(v...)) }
func (l *raftLogger) Errorf(format string, v ...any)   { l.line(slog.LevelError, format, v...) }
func (l *raftLogger) Fatal(v ...any)                   { l.Error(v...); os.Exit(1) }
func (l *raftLogger) Fatalf(format string, v ...any)   { l.Errorf(format, v...); os.Exit(1) }
func (l *raftLogger) Panic(v ...any)                   { panic(fmt.Sprint(v...)) }
func (l *raftLogger) Panicf(format string, v ...any)   { panic(fmt.Sprintf(format, v...)) }
