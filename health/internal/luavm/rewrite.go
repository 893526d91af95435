package luavm

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// Names of the hidden helpers the rewritten code calls. They start with a
// NUL byte, which no Lua identifier can hold, so a script cannot name them;
// a script that reaches them through _G can only replace them in its own
// per-call environment, and every replacement is itself rewritten code or a
// budgeted library function.
const (
	hiddenConcat = "\x00concat"
	hiddenStore  = "\x00store"
	hiddenNew    = "\x00new"
	hiddenTemp   = "\x00t"
)

// rewriteChunk rewrites a parsed chunk in place so that every allocation
// the VM would make without asking (string concatenation, table stores) goes
// through a budgeted Go function:
//
//	a .. b          =>  \0concat(a, b)
//	t[k] = v        =>  \0store(t, k, v)
//	x, t[k] = e, f  =>  do local o,k = t,k; local v1,v2 = e,f; x = v1; \0store(o,k,v2) end
//	{a, b, k = c}   =>  \0new({a, b, k = c}, 1)
//	function ... end => \0new(function ... end, 0)
//
// \0new charges a new table (with its array entries and its n keyed
// fields) or a new closure to the table budget, so that chains such as
// `t = {t}` or closures capturing closures cannot grow without bound.
//
// The multiple-assignment form evaluates table and key expressions before
// the right-hand side, as Lua does.
func rewriteChunk(stmts []ast.Stmt) []ast.Stmt {
	r := rewriter{}
	return r.stmts(stmts)
}

type rewriter struct{ temps int }

func (r *rewriter) temp() string {
	r.temps++
	return hiddenTemp + strconv.Itoa(r.temps)
}

func (r *rewriter) stmts(list []ast.Stmt) []ast.Stmt {
	out := list[:0:0]
	for _, s := range list {
		out = append(out, r.stmt(s))
		// "local function f" keeps its form (the compiler puts f in scope
		// inside its own body only then); its closure is charged by a
		// statement right after it.
		if la, ok := s.(*ast.LocalAssignStmt); ok && isLocalFunction(la) {
			out = append(out, callStmt(la.Line(), hiddenNew, ident(la.Line(), la.Names[0]), number(la.Line(), 0)))
		}
	}
	return out
}

func isLocalFunction(s *ast.LocalAssignStmt) bool {
	if len(s.Names) != 1 || len(s.Exprs) != 1 {
		return false
	}
	_, ok := s.Exprs[0].(*ast.FunctionExpr)
	return ok
}

func number(line, n int) ast.Expr {
	e := &ast.NumberExpr{Value: strconv.Itoa(n)}
	e.SetLine(line)
	return e
}

func (r *rewriter) exprs(list []ast.Expr) []ast.Expr {
	for i, e := range list {
		list[i] = r.expr(e)
	}
	return list
}

func (r *rewriter) stmt(s ast.Stmt) ast.Stmt {
	switch s := s.(type) {
	case *ast.AssignStmt:
		return r.assign(s)
	case *ast.LocalAssignStmt:
		if isLocalFunction(s) {
			r.function(s.Exprs[0].(*ast.FunctionExpr))
			return s
		}
		s.Exprs = r.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = r.expr(s.Expr)
	case *ast.DoBlockStmt:
		s.Stmts = r.stmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = r.expr(s.Condition)
		s.Stmts = r.stmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = r.expr(s.Condition)
		s.Stmts = r.stmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = r.expr(s.Condition)
		s.Then = r.stmts(s.Then)
		s.Else = r.stmts(s.Else)
	case *ast.NumberForStmt:
		s.Init = r.expr(s.Init)
		s.Limit = r.expr(s.Limit)
		if s.Step != nil {
			s.Step = r.expr(s.Step)
		}
		s.Stmts = r.stmts(s.Stmts)
	case *ast.GenericForStmt:
		s.Exprs = r.exprs(s.Exprs)
		s.Stmts = r.stmts(s.Stmts)
	case *ast.FuncDefStmt:
		// "function a.b.c() end" and "function a.b:m() end" store into a
		// table: route them through the counting store too.
		r.function(s.Func)
		line := s.Line()
		switch {
		case s.Name == nil:
		case s.Name.Func == nil && s.Name.Receiver != nil:
			// The compiler adds the implicit self only for a method
			// definition; as a plain function value it must be explicit.
			if s.Func.ParList == nil {
				s.Func.ParList = &ast.ParList{}
			}
			s.Func.ParList.Names = append([]string{"self"}, s.Func.ParList.Names...)
			key := &ast.StringExpr{Value: s.Name.Method}
			key.SetLine(line)
			return callStmt(line, hiddenStore, r.expr(s.Name.Receiver), key, s.Func)
		case s.Name.Func != nil:
			if a, ok := s.Name.Func.(*ast.AttrGetExpr); ok {
				return callStmt(line, hiddenStore, r.expr(a.Object), r.expr(a.Key), s.Func)
			}
			// "function f() end" is "f = function() end": charge the closure.
			as := &ast.AssignStmt{Lhs: []ast.Expr{s.Name.Func}, Rhs: []ast.Expr{call(line, hiddenNew, s.Func, number(line, 0))}}
			as.SetLine(line)
			return as
		}
	case *ast.ReturnStmt:
		s.Exprs = r.exprs(s.Exprs)
	}
	return s
}

func (r *rewriter) function(f *ast.FunctionExpr) {
	if f != nil {
		f.Stmts = r.stmts(f.Stmts)
	}
}

func (r *rewriter) assign(s *ast.AssignStmt) ast.Stmt {
	s.Rhs = r.exprs(s.Rhs)
	anyStore := false
	for i, lhs := range s.Lhs {
		if a, ok := lhs.(*ast.AttrGetExpr); ok {
			a.Object = r.expr(a.Object)
			a.Key = r.expr(a.Key)
			anyStore = true
		} else {
			s.Lhs[i] = r.expr(lhs)
		}
	}
	if !anyStore {
		return s
	}
	line := s.Line()
	if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
		a := s.Lhs[0].(*ast.AttrGetExpr)
		return callStmt(line, hiddenStore, a.Object, a.Key, s.Rhs[0])
	}
	// Multiple assignment: evaluate tables and keys, then values, then store.
	var prefixNames []string
	var prefixExprs []ast.Expr
	type target struct {
		obj, key string // temps for a store; empty for a plain variable
		plain    ast.Expr
	}
	targets := make([]target, len(s.Lhs))
	for i, lhs := range s.Lhs {
		if a, ok := lhs.(*ast.AttrGetExpr); ok {
			o, k := r.temp(), r.temp()
			prefixNames = append(prefixNames, o, k)
			prefixExprs = append(prefixExprs, a.Object, a.Key)
			targets[i] = target{obj: o, key: k}
		} else {
			targets[i] = target{plain: lhs}
		}
	}
	values := make([]string, len(s.Lhs))
	for i := range values {
		values[i] = r.temp()
	}
	var block []ast.Stmt
	block = append(block, localStmt(line, prefixNames, prefixExprs))
	block = append(block, localStmt(line, values, s.Rhs))
	for i, t := range targets {
		if t.plain != nil {
			as := &ast.AssignStmt{Lhs: []ast.Expr{t.plain}, Rhs: []ast.Expr{ident(line, values[i])}}
			as.SetLine(line)
			block = append(block, as)
			continue
		}
		block = append(block, callStmt(line, hiddenStore, ident(line, t.obj), ident(line, t.key), ident(line, values[i])))
	}
	do := &ast.DoBlockStmt{Stmts: block}
	do.SetLine(line)
	return do
}

func (r *rewriter) expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		lhs, rhs := r.expr(e.Lhs), r.expr(e.Rhs)
		return call(e.Line(), hiddenConcat, lhs, rhs)
	case *ast.AttrGetExpr:
		e.Object = r.expr(e.Object)
		e.Key = r.expr(e.Key)
	case *ast.TableExpr:
		keyed := 0
		for _, f := range e.Fields {
			if f.Key != nil {
				f.Key = r.expr(f.Key)
				keyed++
			}
			f.Value = r.expr(f.Value)
		}
		return call(e.Line(), hiddenNew, e, number(e.Line(), keyed))
	case *ast.FuncCallExpr:
		if e.Func != nil {
			e.Func = r.expr(e.Func)
		}
		if e.Receiver != nil {
			e.Receiver = r.expr(e.Receiver)
		}
		e.Args = r.exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.FunctionExpr:
		r.function(e)
		return call(e.Line(), hiddenNew, e, number(e.Line(), 0))
	}
	return e
}

func ident(line int, name string) ast.Expr {
	id := &ast.IdentExpr{Value: name}
	id.SetLine(line)
	return id
}

// call builds a single-result call expression of a hidden helper.
func call(line int, fn string, args ...ast.Expr) ast.Expr {
	c := &ast.FuncCallExpr{Func: ident(line, fn), Args: args, AdjustRet: true}
	c.SetLine(line)
	c.SetLastLine(line)
	return c
}

func callStmt(line int, fn string, args ...ast.Expr) ast.Stmt {
	c := &ast.FuncCallExpr{Func: ident(line, fn), Args: args}
	c.SetLine(line)
	c.SetLastLine(line)
	s := &ast.FuncCallStmt{Expr: c}
	s.SetLine(line)
	return s
}

func localStmt(line int, names []string, exprs []ast.Expr) ast.Stmt {
	s := &ast.LocalAssignStmt{Names: names, Exprs: exprs}
	s.SetLine(line)
	return s
}
