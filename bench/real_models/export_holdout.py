#!/usr/bin/env python3
"""Models kept OUT of the corpus, to try Fusebox the way a new user would (issue 18: "expect real
models you did not export to be tried the same way"): other torchvision, timm and transformers
architectures, HF models fed an attention mask, encoder-decoders with two inputs. Same layout,
exporters and seeded weights as export_corpus.py. On the lent GPU machine:
    python3 bench/real_models/export_holdout.py OUT [torchvision|timm|transformers|torch ...]
then here: build/app/fusebox conformance OUT [--train]"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from export_corpus import Logits, export_all


def torchvision_models():
    import torchvision
    from torchvision.models import swin_transformer as swin

    class Out(nn.Module):  # segmentation models return {"out": ...}
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    img = lambda s=32: (lambda: (torch.randn(1, 3, s, s),))
    return {
        "tv_mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(num_classes=10), img(64)),
        "tv_squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(num_classes=10), img(67)),  # odd size: ceil_mode pools
        "tv_mnasnet0_5": (lambda: torchvision.models.mnasnet0_5(num_classes=10), img(32)),
        "tv_swin": (lambda: swin.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                                                 num_classes=10), img(32)),
        "tv_swin_v2": (lambda: swin.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                                                    num_classes=10, block=swin.SwinTransformerBlockV2,
                                                    downsample_layer=swin.PatchMergingV2), img(32)),
        "tv_vit": (lambda: torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                                                mlp_dim=64, num_classes=10), img(32)),
        "tv_maxvit": (lambda: torchvision.models.MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[16, 32],
                                                        block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.0, num_classes=10), img(32)),
        "tv_lraspp": (lambda: Out(torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                                            num_classes=4)), img(64)),
        "tv_regnet": (lambda: torchvision.models.regnet_y_400mf(num_classes=10), img(32)),
    }


def timm_models():
    import timm
    from timm.models.beit import Beit
    from timm.models.swin_transformer import SwinTransformer
    from timm.models.convmixer import ConvMixer
    from timm.models.deit import VisionTransformerDistilled

    make = lambda name, **kw: (lambda: timm.create_model(name, pretrained=False, num_classes=10, **kw))
    img = lambda s=32: (lambda: (torch.randn(1, 3, s, s),))
    return {
        "timm_mobilevit": (make("mobilevit_xxs"), img(64)),
        "timm_ghostnet": (make("ghostnet_050"), img(32)),
        "timm_lcnet": (make("lcnet_050"), img(32)),
        "timm_regnety": (make("regnety_002"), img(32)),
        "timm_edgenext": (make("edgenext_xx_small"), img(64)),
        "timm_mixnet": (make("mixnet_s"), img(32)),
        "timm_fastvit": (make("fastvit_t8"), img(64)),
        "timm_efficientvit": (make("efficientvit_b0"), img(64)),
        "timm_convmixer": (lambda: ConvMixer(dim=32, depth=2, kernel_size=5, patch_size=4, num_classes=10), img(32)),
        "timm_beit": (lambda: Beit(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, num_classes=10,
                                   use_rel_pos_bias=True), img(32)),
        "timm_swin": (lambda: SwinTransformer(img_size=32, patch_size=2, window_size=4, embed_dim=16, depths=(2, 2), num_heads=(2, 4),
                                              num_classes=10), img(32)),
        "timm_deit_distilled": (lambda: VisionTransformerDistilled(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2,
                                                                   num_classes=10), img(32)),
    }


def transformers_models():
    import transformers as tf

    ids = lambda: (torch.randint(0, 256, (2, 13)),)
    mask = torch.ones(2, 13, dtype=torch.long)
    mask[1, 9:] = 0  # the second row is padded: masks that matter

    def masked():
        return (torch.randint(0, 256, (2, 13)), mask.clone())

    def seq2seq():
        return (torch.randint(0, 256, (2, 13)), torch.randint(0, 256, (2, 7)))

    enc = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
               max_position_embeddings=64)
    dec = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
               max_position_embeddings=64)
    lm = lambda cls, cfg, **kw: (lambda: Logits(getattr(tf, cls)(getattr(tf, cfg)(**kw)), "logits"))
    hidden = lambda cls, cfg, **kw: (lambda: Logits(getattr(tf, cls)(getattr(tf, cfg)(**kw)), "last_hidden_state"))

    class Seq2Seq(nn.Module):  # encoder-decoder models: (input_ids, decoder_input_ids) -> logits
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, decoder_input_ids):
            return self.m(input_ids=input_ids, decoder_input_ids=decoder_input_ids, return_dict=True).logits

    return {
        "hf_bert_masked": (lm("BertForSequenceClassification", "BertConfig", num_labels=3, **enc), masked),
        "hf_roberta": (lm("RobertaForSequenceClassification", "RobertaConfig", num_labels=3, pad_token_id=1, **enc), ids),
        "hf_albert": (hidden("AlbertModel", "AlbertConfig", embedding_size=32, **enc), masked),
        "hf_electra": (hidden("ElectraModel", "ElectraConfig", embedding_size=32, **enc), ids),
        "hf_mobilebert": (hidden("MobileBertModel", "MobileBertConfig", vocab_size=256, hidden_size=64, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64, embedding_size=32, intra_bottleneck_size=32,
                                 true_hidden_size=32, max_position_embeddings=64), ids),
        "hf_deberta_v2": (hidden("DebertaV2Model", "DebertaV2Config", relative_attention=True, position_buckets=16,
                                 pos_att_type=["p2c", "c2p"], **enc), ids),
        "hf_gpt2_masked": (lm("GPT2LMHeadModel", "GPT2Config", vocab_size=256, n_embd=64, n_layer=2, n_head=2, n_positions=64), masked),
        "hf_gpt_neo": (lm("GPTNeoForCausalLM", "GPTNeoConfig", vocab_size=256, hidden_size=64, num_layers=2, num_heads=2,
                          attention_types=[[["global", "local"], 1]], window_size=8, max_position_embeddings=64), ids),
        "hf_opt": (lm("OPTForCausalLM", "OPTConfig", vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                      ffn_dim=128, word_embed_proj_dim=64, max_position_embeddings=64), ids),
        "hf_llama": (lm("LlamaForCausalLM", "LlamaConfig", num_key_value_heads=1, **dec), ids),
        "hf_qwen2": (lm("Qwen2ForCausalLM", "Qwen2Config", num_key_value_heads=1, **dec), masked),
        "hf_phi": (lm("PhiForCausalLM", "PhiConfig", partial_rotary_factor=0.5, **dec), ids),
        "hf_bloom": (lm("BloomForCausalLM", "BloomConfig", vocab_size=256, hidden_size=64, n_layer=2, n_head=2), ids),
        "hf_bart": (lambda: Seq2Seq(tf.BartForConditionalGeneration(tf.BartConfig(vocab_size=256, d_model=64, encoder_layers=2,
                                                                                   decoder_layers=2, encoder_attention_heads=2,
                                                                                   decoder_attention_heads=2, encoder_ffn_dim=128,
                                                                                   decoder_ffn_dim=128, max_position_embeddings=64))),
                    seq2seq),
        "hf_t5": (lambda: Seq2Seq(tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=256, d_model=64, d_kv=32, d_ff=128, num_layers=2,
                                                                             num_heads=2))), seq2seq),
        "hf_wav2vec2": (hidden("Wav2Vec2Model", "Wav2Vec2Config", hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                               num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4), lambda: (torch.randn(1, 800),)),
        "hf_clip_vision": (hidden("CLIPVisionModel", "CLIPVisionConfig", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=2, image_size=32, patch_size=8), lambda: (torch.randn(1, 3, 32, 32),)),
        "hf_segformer": (lm("SegformerForSemanticSegmentation", "SegformerConfig", num_encoder_blocks=2, depths=[1, 1],
                            sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2], decoder_hidden_size=32,
                            num_labels=4, patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]), lambda: (torch.randn(1, 3, 32, 32),)),
    }


def torch_models():
    class Video3d(nn.Module):  # 3-D conv, batch norm and pooling, as video models use
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv3d(3, 8, 3, padding=1), nn.BatchNorm3d(8), nn.ReLU(), nn.MaxPool3d(2),
                                      nn.Conv3d(8, 16, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)), nn.ReLU(),
                                      nn.AdaptiveAvgPool3d(1))
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            return self.fc(self.body(x).flatten(1))

    class TransformerLayers(nn.Module):  # torch's own encoder layers with a key padding mask
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 2, 64, batch_first=True, dropout=0.0), 2,
                                             enable_nested_tensor=False)

        def forward(self, x):
            return self.enc(x)

    return {"torch_video3d": (Video3d, lambda: (torch.randn(1, 3, 5, 16, 16),)),
            "torch_transformer": (TransformerLayers, lambda: (torch.randn(2, 9, 32),))}


groups = {"torchvision": torchvision_models, "timm": timm_models, "transformers": transformers_models, "torch": torch_models}
chosen = sys.argv[2:] or list(groups)
export_all(sys.argv[1], [(g, groups[g]) for g in chosen])
