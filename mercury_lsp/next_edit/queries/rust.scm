; Rust: definitions, parameters, calls, references and imports (next_edit.symbols)
(function_item name: (identifier) @definition)
(struct_item name: (type_identifier) @definition)
(enum_item name: (type_identifier) @definition)
(trait_item name: (type_identifier) @definition)
(const_item name: (identifier) @definition)
(let_declaration pattern: (identifier) @definition)
(parameter pattern: (identifier) @parameter)
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(identifier) @reference
(type_identifier) @reference
(use_declaration) @import
(extern_crate_declaration) @import
; signatures: the functions, their `self` receivers (not passed in the parentheses of `x.f(...)`)
; and variadic parameters (next_edit.detect)
(function_item) @function
(function_signature_item) @function
(self_parameter) @receiver
(variadic_parameter) @variadic
