; C++: C's definitions, parameters, calls, references and imports, and C++'s own (next_edit.symbols)
; inherits: c
(class_specifier name: (type_identifier) @definition)
(using_declaration) @import
