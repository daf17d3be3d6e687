; TSX: TypeScript's definitions, parameters, calls, references and imports (next_edit.symbols)
; inherits: typescript
