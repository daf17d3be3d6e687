; C: definitions, parameters, calls, references and imports (next_edit.symbols)
(function_declarator declarator: (identifier) @definition)
(type_definition declarator: (type_identifier) @definition)
(struct_specifier name: (type_identifier) @definition)
(init_declarator declarator: (identifier) @definition)
(parameter_declaration declarator: (identifier) @parameter)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @parameter))
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(identifier) @reference
(type_identifier) @reference
(preproc_include) @import
; signatures: the functions (their parameters are in the declarator) and `...` (next_edit.detect)
(function_definition) @function
"..." @variadic
