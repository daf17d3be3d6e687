; Java: definitions, parameters, calls, references and imports (next_edit.symbols)
(method_declaration name: (identifier) @definition)
(class_declaration name: (identifier) @definition)
(interface_declaration name: (identifier) @definition)
(variable_declarator name: (identifier) @definition)
(formal_parameter name: (identifier) @parameter)
(method_invocation name: (identifier) @call)
(identifier) @reference
(type_identifier) @reference
(import_declaration) @import
; signatures: the methods and constructors, and variadic parameters (next_edit.detect)
(method_declaration) @function
(constructor_declaration) @function
(spread_parameter) @variadic
