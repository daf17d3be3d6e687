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
; signatures: the functions, their receivers (a method's first parameter, but a staticmethod's),
; parameters with a default and variadic ones (next_edit.detect)
(function_definition) @function
(class_definition body: (block (function_definition parameters: (parameters . [(identifier) (typed_parameter)] @receiver))))
(class_definition body: (block (decorated_definition definition: (function_definition parameters: (parameters . [(identifier) (typed_parameter)] @receiver)))))
(decorated_definition (decorator (identifier) @_static (#eq? @_static "staticmethod")) definition: (function_definition) @static)
(default_parameter) @optional
(typed_default_parameter) @optional
(list_splat_pattern) @variadic
(dictionary_splat_pattern) @variadic
; exports: the lists the module's export machinery spells names in, `__all__ = [...]`, `(...)`,
; `+=`, `.append`/`.extend`/`.insert` (next_edit.exports), and the strings that name an attribute
; to look up, `getattr(module, "name")` (notes, not edits)
(assignment left: (identifier) @_all right: (_) @export.list (#eq? @_all "__all__"))
(augmented_assignment left: (identifier) @_all right: (_) @export.list (#eq? @_all "__all__"))
(call function: (attribute object: (identifier) @_all attribute: (identifier) @_add) arguments: (argument_list) @export.list (#eq? @_all "__all__") (#any-of? @_add "append" "extend" "insert"))
(call function: (identifier) @_lookup arguments: (argument_list . (_) . (string) @note.string) (#any-of? @_lookup "getattr" "hasattr" "setattr" "delattr"))
; a module bound by a call that names it in a string, `m = importlib.import_module("pkg.m")`,
; `m = pytest.importorskip("pkg.m")` (next_edit.exports: `m.name` is the module's)
(assignment left: (identifier) right: (call function: [(identifier) (attribute)] @_load arguments: (argument_list . (string) .)) (#match? @_load "^(importlib\\.)?import_module$|^(pytest\\.)?importorskip$")) @import.dynamic
