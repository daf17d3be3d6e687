; Python: definitions, parameters, calls, references and imports (next_edit.symbols)
(function_definition name: (identifier) @definition)
(class_definition name: (identifier) @definition)
(assignment left: (identifier) @definition)
(for_statement left: (identifier) @definition)
(parameters (identifier) @parameter)
(lambda_parameters (identifier) @parameter)
(default_parameter name: (identifier) @parameter)
(typed_parameter (identifier) @parameter)
(typed_default_parameter name: (identifier) @parameter)
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
(identifier) @reference
(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import
