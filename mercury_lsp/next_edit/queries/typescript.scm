; TypeScript: definitions, parameters, calls, references and imports (next_edit.symbols)
(function_declaration name: (identifier) @definition)
(class_declaration name: (type_identifier) @definition)
(interface_declaration name: (type_identifier) @definition)
(type_alias_declaration name: (type_identifier) @definition)
(method_definition name: (property_identifier) @definition)
(variable_declarator name: (identifier) @definition)
(required_parameter pattern: (identifier) @parameter)
(optional_parameter pattern: (identifier) @parameter)
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(identifier) @reference
(type_identifier) @reference
(import_statement) @import
; signatures: the functions (a variable or a member assigned an arrow function or a function
; expression included), parameters with a default or `?`, and rest parameters (next_edit.detect)
(function_declaration) @function
(generator_function_declaration) @function
(method_definition) @function
(variable_declarator name: (identifier) value: [(arrow_function) (function_expression)]) @function
(assignment_expression left: (member_expression property: (property_identifier)) right: [(arrow_function) (function_expression)]) @function
(optional_parameter) @optional
(required_parameter value: (_)) @optional
(rest_pattern) @variadic
; exports: CommonJS's, `module.exports = { a, b: c }` (the object) and `exports.a = ...` /
; `module.exports.a = ...` (the exported name) (next_edit.exports)
(assignment_expression left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports) right: (object) @export.object (#eq? @_module "module") (#eq? @_exports "exports"))
(assignment_expression left: (member_expression object: (identifier) @_exports property: (property_identifier) @export.name) (#eq? @_exports "exports"))
(assignment_expression left: (member_expression object: (member_expression object: (identifier) @_module property: (property_identifier) @_exports) property: (property_identifier) @export.name) (#eq? @_module "module") (#eq? @_exports "exports"))
