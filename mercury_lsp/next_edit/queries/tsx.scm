; TSX: definitions, parameters, calls, references and imports (next_edit.symbols)
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
