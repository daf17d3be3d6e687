; Go: definitions, parameters, calls, references and imports (next_edit.symbols)
(function_declaration name: (identifier) @definition)
(method_declaration name: (field_identifier) @definition)
(type_spec name: (type_identifier) @definition)
(short_var_declaration left: (expression_list (identifier) @definition))
(var_spec name: (identifier) @definition)
(const_spec name: (identifier) @definition)
(parameter_declaration name: (identifier) @parameter)
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(identifier) @reference
(type_identifier) @reference
(package_identifier) @reference
(import_spec) @import
; signatures: the functions (a method's receiver is its own field, not a parameter) and variadic
; parameters (next_edit.detect)
(function_declaration) @function
(method_declaration) @function
(variadic_parameter_declaration) @variadic
; strings that name a method or a field to look up, `v.MethodByName("Name")` (next_edit.exports:
; notes, not edits)
(call_expression function: (selector_expression field: (field_identifier) @_lookup) arguments: (argument_list . [(interpreted_string_literal) (raw_string_literal)] @note.string) (#any-of? @_lookup "MethodByName" "FieldByName"))
