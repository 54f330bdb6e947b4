// Detecting a model's ChatSyntax (uaii/chat_output.h) from its chat template and
// vocabulary, so the output parser knows what to look for.
#pragma once
#include <functional>
#include <string_view>

#include "uaii/chat_output.h"

namespace uaii::chat {

// True when `piece` is one token of the model's vocabulary (for a Tokenizer:
// PieceToId(piece) != kNoToken). May be empty: the template alone decides.
using PieceLookup = std::function<bool(std::string_view piece)>;

// Reasoning markers: the first pair the template mentions, else the first pair
// whose marker tokens are both in the vocabulary. Tool-call syntax: from the
// markup the template prints for assistant tool calls (first match of an ordered
// table, see output_syntax.cpp); kNone when the template shows none.
ChatSyntax DetectChatSyntax(std::string_view template_source, const PieceLookup& has_piece = {});

}  // namespace uaii::chat
