// Parser of the `.fbx` text model format. Grammar (informal):
//
//   file    := comment* 'model' NAME '(' [input {',' input}] ')' ['dims' '(' NAME '=' INT {',' ...} ')']
//              '{' stmt* '}'
//   input   := NAME ':' type ['range' '(' INT ',' INT ')']
//   type    := DTYPE '[' [dim {',' dim}] ']'           dim := INT | NAME
//   stmt    := 'param' NAME ':' type '=' init
//            | 'scope' NAME '{' stmt* '}'                (module scope; params inside get NAME. prefix)
//            | NAME '=' expr
//            | 'return' expr {',' expr}
//   init    := ('zeros' | 'ones' | 'randn' '(' kwargs ')' | 'uniform' '(' kwargs ')' | 'full' '(' NUM ')') ['*' NUM]
//   expr    := term {('+'|'-') term};  term := unary {('*'|'/') unary};  unary := '-' unary | primary
//   primary := NUM | STRING | 'true' | 'false' | NAME | NAME '(' [arg {',' arg}] ')' | '(' expr ')'
//            | '[' [expr {',' expr}] ']'
//   arg     := [NAME '='] expr
//
// Names may contain dots (fc1.weight). '#' starts a comment; whitespace and newlines are free.
// Errors are ParseError with file:line:col.
#pragma once

#include <string>
#include <string_view>

#include "core/frontend/model.h"

namespace fusebox {

ModelDef parseModel(std::string_view source, const std::string& file);

}  // namespace fusebox
