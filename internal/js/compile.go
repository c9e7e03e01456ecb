package js

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// functionSource turns a script as mongod accepts it into the source of
// one function expression (mongod's parseJSFunctionOrExpression):
//   - a function or arrow function expression is itself;
//   - a program whose last statement is an expression is the body of a
//     function returning that expression ("this.a > 1";
//     "var x = this.a; x > 1");
//   - anything else — statements, or a body with a top-level return that
//     does not parse as a program ("return this.a > 1") — is the body of a
//     function.
func functionSource(src string) string {
	if fn, err := parser.ParseFile(nil, "", "("+src+"\n)", 0); err == nil && len(fn.Body) == 1 {
		if st, ok := fn.Body[0].(*ast.ExpressionStatement); ok {
			switch st.Expression.(type) {
			case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
				return "(" + src + "\n)"
			}
		}
	}
	body := "(function() {\n" + src + "\n})"
	prg, err := parser.ParseFile(nil, "", src, 0)
	if err != nil || len(prg.Body) == 0 {
		return body
	}
	if _, ok := prg.Body[len(prg.Body)-1].(*ast.ExpressionStatement); !ok {
		return body
	}
	start := 0 // where the last statement begins: after the one before it
	if n := len(prg.Body); n > 1 {
		start = int(prg.Body[n-2].Idx1()) - 1 // file.Idx counts from 1
	}
	if start < 0 || start > len(src) {
		return body
	}
	rest := strings.TrimLeft(src[start:], " \t\r\n;")
	return "(function() {\n" + src[:start] + ";\nreturn " + rest + "\n})"
}

// SetEmit defines the global emit(key, value) of a mapReduce map
// function; fn receives the converted key and value (copies). An error fn
// returns is thrown into the script and answered by the call with its
// code.
func (s *Session) SetEmit(fn func(key, value bson.Value) error) error {
	return s.call(func(rt *goja.Runtime) error {
		return rt.Set("emit", func(c goja.FunctionCall) goja.Value {
			if len(c.Arguments) != 2 {
				panic(rt.NewTypeError("emit takes 2 args"))
			}
			k, err := s.h.toBSONValue(c.Argument(0))
			if err == nil {
				var v bson.Value
				if v, err = s.h.toBSONValue(c.Argument(1)); err == nil {
					err = fn(k, v)
				}
			}
			if err != nil {
				panic(rt.NewGoError(err))
			}
			return goja.Undefined()
		})
	})
}
